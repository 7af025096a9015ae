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
; A package's own constants and variables (`const MaxRetries = 3`, `var ErrNotFound = …`).
(source_file (const_declaration (const_spec name: (identifier) @name) @def.const))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @def.variable)))

(call_expression function: (identifier) @name) @call
(call_expression
  function: (selector_expression operand: (_) @qualifier field: (field_identifier) @name)) @call

; Declared types of receivers, parameters and locals (@var with @var.name and @var.type): a call
; on the name is a call on the type. `x := &T{}` and `x := T{}` declare a `T`.
(parameter_declaration name: (identifier) @var.name type: (_) @var.type) @var
(var_spec name: (identifier) @var.name type: (_) @var.type) @var
(short_var_declaration
  left: (expression_list . (identifier) @var.name .)
  right: (expression_list .
    [
      (composite_literal type: (_) @var.type)
      (unary_expression operand: (composite_literal type: (_) @var.type))
    ] .)) @var
; `r := chi.NewRouter()`, `f, err := os.Open(p)`: the first name is what the call returns (its
; first result; the resolver follows the call).
(short_var_declaration
  left: (expression_list . (identifier) @var.name)
  right: (expression_list . (call_expression) @var.type .)) @var

(import_spec path: (_) @import.path) @import
