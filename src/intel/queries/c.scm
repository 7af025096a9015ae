; C, and the part of C++ that is C: definitions, call sites, includes (captures as in
; rust.scm). Prototypes (declarations without a body) are not definitions.

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @def.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name)))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro

(call_expression function: (identifier) @name) @call
(call_expression
  function: (field_expression argument: (_) @qualifier field: (field_identifier) @name)) @call

(preproc_include path: (_) @import.path) @import
