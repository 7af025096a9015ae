; JavaScript and TypeScript (shared part): definitions, call sites, imports (captures as in
; rust.scm).

(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(class name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(variable_declarator name: (identifier) @name value: (class)) @def.class
; `exports.parse = function` is a module's function (imported, then called bare); any other
; `obj.parse = function` (a prototype, a result object) is reached only through its object.
(assignment_expression
  left: (member_expression object: (_) @qualifier property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]
  (#match? @qualifier "^(module\\.)?exports$")) @def.function
(assignment_expression
  left: (member_expression object: (_) @qualifier property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @def.method
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @def.method
; A module's own `const` bindings (`export const DEFAULTS = {…}`, `const app = new Hono()`) are
; constants, unless a pattern above took them (a function or class value: the first pattern to
; match a node wins). One bound to `require(…)` is an import, not a definition (dropped in
; extract.rs).
(program
  (lexical_declaration
    kind: "const"
    (variable_declarator name: (identifier) @name) @def.const))
(program
  (export_statement
    declaration: (lexical_declaration
      kind: "const"
      (variable_declarator name: (identifier) @name) @def.const)))
; A module's own `let` and `var` bindings (`let count = $state(0)` in a Svelte component, `var
; server;`) are variables, on the same terms.
(program
  (lexical_declaration
    kind: "let"
    (variable_declarator name: (identifier) @name) @def.variable))
(program
  (variable_declaration
    (variable_declarator name: (identifier) @name) @def.variable))
(program
  (export_statement
    declaration: (lexical_declaration
      kind: "let"
      (variable_declarator name: (identifier) @name) @def.variable)))
(program
  (export_statement
    declaration: (variable_declaration
      (variable_declarator name: (identifier) @name) @def.variable)))
; Locals bound to `new Foo()` or to a chain of calls (`const qb = repo.createQueryBuilder()`,
; `const res = await client.get(url)`) (@var with @var.name and @var.type): a call on the name
; is a call on what the value is (a chain is followed by the resolver).
(lexical_declaration
  (variable_declarator
    name: (identifier) @var.name
    value: [
      (new_expression constructor: [(identifier) (member_expression)] @var.type)
      (call_expression function: (member_expression)) @var.type
      (await_expression (call_expression function: (member_expression))) @var.type
    ])) @var
; Any other object literal bound to a name qualifies its methods (`objectTraps.get`), defining
; nothing.
(variable_declarator name: (identifier) @name value: (object)) @scope.object

(call_expression function: (identifier) @name) @call
(call_expression
  function: (member_expression
    object: (_) @qualifier
    property: [(property_identifier) (private_property_identifier)] @name)) @call
(new_expression constructor: (identifier) @name) @call
(new_expression
  constructor: (member_expression object: (_) @qualifier property: (property_identifier) @name)) @call

(import_statement source: (string) @import.path) @import
(export_statement source: (string) @import.path) @import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) @import.path)
  (#eq? @_require "require")) @import
(call_expression
  function: (import)
  arguments: (arguments . (string) @import.path)) @import
