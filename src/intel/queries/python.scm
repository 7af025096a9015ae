; Python: definitions, call sites, imports (captures as in rust.scm).

(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class

(call function: (identifier) @name) @call
(call function: (attribute object: (_) @qualifier attribute: (identifier) @name)) @call

(import_statement) @import
(import_from_statement) @import
