; JavaScript and TypeScript (shared part): definitions, call sites, imports (captures as in
; rust.scm).

(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(class name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(variable_declarator name: (identifier) @name value: (class)) @def.class
(assignment_expression
  left: (member_expression object: (_) @qualifier property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @def.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @def.method

(call_expression function: (identifier) @name) @call
(call_expression
  function: (member_expression object: (_) @qualifier property: (property_identifier) @name)) @call
(new_expression constructor: (identifier) @name) @call
(new_expression
  constructor: (member_expression object: (_) @qualifier property: (property_identifier) @name)) @call

(import_statement source: (string) @import.path) @import
(export_statement source: (string) @import.path) @import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) @import.path)
  (#eq? @_require "require")) @import
(call_expression
  function: (import)
  arguments: (arguments . (string) @import.path)) @import
