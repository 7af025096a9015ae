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

(method_invocation object: (_) @qualifier name: (identifier) @name) @call
(method_invocation !object name: (identifier) @name) @call
(object_creation_expression type: (type_identifier) @name) @call
(object_creation_expression type: (generic_type (type_identifier) @name)) @call
(object_creation_expression
  type: (scoped_type_identifier (_) @qualifier . (type_identifier) @name)) @call

(import_declaration) @import
