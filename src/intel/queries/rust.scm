; Rust: definitions, call sites, imports. Captures: @def.<kind> (the definition's node) with
; @name; @scope.impl (qualifies its members, defines nothing); @call with @name and
; @qualifier (receiver or path as written); @import with @import.use or @import.mod.

(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(type_item name: (type_identifier) @name) @def.type
(trait_item name: (type_identifier) @name) @def.trait
(mod_item name: (identifier) @name body: (_)) @def.module
(macro_definition name: (identifier) @name) @def.macro
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.const
(impl_item type: [(type_identifier) (scoped_type_identifier) (generic_type) (reference_type) (primitive_type)] @name) @scope.impl

(call_expression function: (identifier) @name) @call
(call_expression
  function: (scoped_identifier path: (_) @qualifier name: (identifier) @name)) @call
(call_expression
  function: (field_expression value: (_) @qualifier field: (field_identifier) @name)) @call
(call_expression
  function: (generic_function function: (identifier) @name)) @call
(call_expression
  function: (generic_function
    function: (scoped_identifier path: (_) @qualifier name: (identifier) @name))) @call
(call_expression
  function: (generic_function
    function: (field_expression value: (_) @qualifier field: (field_identifier) @name))) @call
; Calls inside a macro's arguments (`assert!(check(x))`, `vec![s.len()]`), which the grammar
; leaves as tokens: a name followed by a parenthesised group; @tokens is the group they are in.
(token_tree (identifier) @name @call . (token_tree . "(")) @tokens
(token_tree
  (_) @qualifier . "::" . (identifier) @name @call . (token_tree . "(")) @tokens
(token_tree (_) @qualifier . "." . (identifier) @name @call . (token_tree . "(")) @tokens
(macro_invocation macro: (identifier) @name) @call
(macro_invocation macro: (scoped_identifier path: (_) @qualifier name: (identifier) @name)) @call

; Declared types of parameters and locals (@var with @var.name and @var.type): a call on the
; name is a call on the type. `Stack { .. }` declares a `Stack`; `let s = Stack::new()` is what
; `new` returns (@var.value), a `Stack` where the index lacks it (a derive's `default()`).
(parameter pattern: (identifier) @var.name type: (_) @var.type) @var
(let_declaration pattern: (identifier) @var.name type: (_) @var.type) @var
(let_declaration
  pattern: (identifier) @var.name
  value: [
    (call_expression function: (scoped_identifier path: (_) @var.type)) @var.value
    (try_expression
      (call_expression function: (scoped_identifier path: (_) @var.type))) @var.value
    (struct_expression name: (type_identifier) @var.type)
  ]) @var
; `let res = client.get(url).await?`: the variable is what the chain returns.
(let_declaration
  pattern: (identifier) @var.name
  value: [
    (call_expression function: (field_expression))
    (await_expression (call_expression function: (field_expression)))
    (try_expression (call_expression function: (field_expression)))
    (try_expression (await_expression (call_expression function: (field_expression))))
  ] @var.type) @var
; `let config = &context.config`, `let mut current = self`, `let group = &mut groups[i]`:
; the variable is what it names; `let x = if c { a } else { b }` (or a `match`) what its
; branches give.
(let_declaration
  pattern: (identifier) @var.name
  value: [
    (identifier)
    (self)
    (field_expression)
    (index_expression)
    (reference_expression value: [(identifier) (self) (field_expression) (index_expression)])
    (if_expression)
    (match_expression)
  ] @var.type) @var

(use_declaration argument: (_) @import.use) @import
(mod_item name: (identifier) @import.mod !body) @import
