; Java: definitions, call sites, imports (captures as in rust.scm). Constructors are
; definitions of their own kind; `new Foo()` is a call of the class `Foo`.

(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(annotation_type_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
(compact_constructor_declaration name: (identifier) @name) @def.constructor
; A `static final` field is a constant (`Config.MAX_SIZE`).
(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator name: (identifier) @name) @def.const)

(method_invocation object: (_) @qualifier name: (identifier) @name) @call
(method_invocation !object name: (identifier) @name) @call
(object_creation_expression type: (type_identifier) @name) @call
(object_creation_expression type: (generic_type (type_identifier) @name)) @call
(object_creation_expression
  type: (scoped_type_identifier (_) @qualifier . (type_identifier) @name)) @call

(import_declaration) @import

; Declared types of variables, parameters and fields (@var with @var.name and @var.type): a
; call on the name is a call on the type.
(local_variable_declaration
  type: (_) @var.type
  declarator: (variable_declarator name: (identifier) @var.name)) @var
(field_declaration
  type: (_) @var.type
  declarator: (variable_declarator name: (identifier) @var.name)) @var
(formal_parameter type: (_) @var.type name: (identifier) @var.name) @var
(enhanced_for_statement type: (_) @var.type name: (identifier) @var.name) @var
; `var b = new Builder()`, `var q = repo.query()`: what the value is (a chain, followed by the
; resolver).
(local_variable_declaration
  type: (type_identifier) @_var
  declarator: (variable_declarator
    name: (identifier) @var.name
    value: [(object_creation_expression) (method_invocation)] @var.type)
  (#eq? @_var "var")) @var
