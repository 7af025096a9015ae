; Go: definitions, call sites, imports (captures as in rust.scm). A method is qualified by its
; receiver's type (@receiver).

(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method

(call_expression function: (identifier) @name) @call
(call_expression
  function: (selector_expression operand: (_) @qualifier field: (field_identifier) @name)) @call

(import_spec path: (_) @import.path) @import
