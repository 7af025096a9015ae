; C#: definitions, call sites, imports (captures as in rust.scm). Namespaces qualify nothing:
; C# code names a type, not the namespace it is declared in. `new Foo()` is a call of `Foo`.

(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(local_function_statement name: (identifier) @name) @def.function
(constructor_declaration name: (identifier) @name) @def.constructor
(property_declaration name: (identifier) @name) @def.property
(delegate_declaration name: (identifier) @name) @def.type
; A `const` field is a constant (`Limits.MaxDepth`).
(field_declaration
  (modifier) @_const
  (variable_declaration (variable_declarator name: (identifier) @name) @def.const)
  (#eq? @_const "const"))

(invocation_expression function: (identifier) @name) @call
(invocation_expression function: (generic_name (identifier) @name)) @call
(invocation_expression
  function: (member_access_expression expression: (_) @qualifier name: (identifier) @name)) @call
(invocation_expression
  function: (member_access_expression
    expression: (_) @qualifier
    name: (generic_name (identifier) @name))) @call
(object_creation_expression type: (identifier) @name) @call
(object_creation_expression type: (generic_name (identifier) @name)) @call
(object_creation_expression
  type: (qualified_name qualifier: (_) @qualifier name: (identifier) @name)) @call

(using_directive) @import

; Declared types of variables, parameters, fields and properties (@var with @var.name and
; @var.type): a call on the name is a call on the type.
(local_declaration_statement
  (variable_declaration
    type: (_) @var.type
    (variable_declarator name: (identifier) @var.name))) @var
(field_declaration
  (variable_declaration
    type: (_) @var.type
    (variable_declarator name: (identifier) @var.name))) @var
; `var client = new HttpClient()`, `var q = db.Query()`: what the value is (a chain, followed by
; the resolver).
(local_declaration_statement
  (variable_declaration
    type: (implicit_type)
    (variable_declarator
      name: (identifier) @var.name
      [(object_creation_expression) (invocation_expression)] @var.type))) @var
(property_declaration type: (_) @var.type name: (identifier) @var.name) @var
(parameter type: (_) @var.type name: (identifier) @var.name) @var
