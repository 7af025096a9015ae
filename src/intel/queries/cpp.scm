; C++ only (added to c.scm): methods defined in their class or out of it (`Stack::push`,
; qualified by @receiver), classes, namespaces (which qualify their members and define
; nothing), qualified and template calls, `new`.

(function_definition
  declarator: (function_declarator declarator: (field_identifier) @name)) @def.function
(function_definition
  declarator: (function_declarator
    declarator: [(destructor_name) (operator_name)] @name)) @def.function
(function_definition
  declarator: (reference_declarator
    (function_declarator declarator: [(identifier) (field_identifier)] @name))) @def.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (field_identifier) @name))) @def.function
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @receiver
      name: [(identifier) (destructor_name) (operator_name)] @name))) @def.method
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name)))) @def.method
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name)))) @def.method
(class_specifier name: (type_identifier) @name body: (_)) @def.class
(namespace_definition name: (_) @name body: (_)) @scope.namespace
(alias_declaration name: (type_identifier) @name) @def.type
(concept_definition name: (identifier) @name) @def.type

(call_expression
  function: (qualified_identifier scope: (_) @qualifier name: (identifier) @name)) @call
(call_expression function: (template_function name: (identifier) @name)) @call
(call_expression
  function: (qualified_identifier
    scope: (_) @qualifier
    name: (template_function name: (identifier) @name))) @call
(call_expression
  function: (field_expression
    argument: (_) @qualifier
    field: (template_method name: (field_identifier) @name))) @call
(new_expression type: (type_identifier) @name) @call
(new_expression type: (template_type name: (type_identifier) @name)) @call

; Declared types of variables, parameters and fields (@var with @var.name and @var.type): a
; call on the name is a call on the type (`Status s; s.ok()`, `Iterator* it; it->Next()`).
; Named types only: primitives and `auto` say nothing.
(declaration
  type: [(type_identifier) (qualified_identifier) (template_type)] @var.type
  declarator: [
    (identifier) @var.name
    (init_declarator declarator: (identifier) @var.name)
    (pointer_declarator declarator: (identifier) @var.name)
    (reference_declarator (identifier) @var.name)
    (init_declarator declarator: (pointer_declarator declarator: (identifier) @var.name))
    (init_declarator declarator: (reference_declarator (identifier) @var.name))
  ]) @var
(parameter_declaration
  type: [(type_identifier) (qualified_identifier) (template_type)] @var.type
  declarator: [
    (identifier) @var.name
    (pointer_declarator declarator: (identifier) @var.name)
    (reference_declarator (identifier) @var.name)
  ]) @var
(field_declaration
  type: [(type_identifier) (qualified_identifier) (template_type)] @var.type
  declarator: [
    (field_identifier) @var.name
    (pointer_declarator declarator: (field_identifier) @var.name)
  ]) @var
