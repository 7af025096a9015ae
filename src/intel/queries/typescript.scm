; TypeScript and TSX only (added to ecma.scm).

(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.namespace
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (_) @name) @def.function
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @def.method

; Declared types of parameters, locals and fields (@var with @var.name and @var.type): a call
; on the name (a field's: on `this.name`) is a call on the type.
(required_parameter pattern: (identifier) @var.name type: (type_annotation (_) @var.type)) @var
(optional_parameter pattern: (identifier) @var.name type: (type_annotation (_) @var.type)) @var
(lexical_declaration
  (variable_declarator name: (identifier) @var.name type: (type_annotation (_) @var.type))) @var
(public_field_definition
  name: (property_identifier) @var.name
  type: (type_annotation (_) @var.type)) @var
