; Ruby: definitions, call sites, `require`s (captures as in rust.scm). `Foo.new` is turned
; into a call of the class `Foo` in code. Calls written without parentheses or arguments
; (`save`) cannot be told from local variables and are not call sites.

(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.method
(class name: (constant) @name) @def.class
(class name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @def.class
(module name: (constant) @name) @def.module
(module name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @def.module

(call receiver: (_) @qualifier method: (identifier) @name) @call
(call !receiver method: (identifier) @name arguments: (_)) @call

(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list . (string) @import.path)
  (#match? @_require "^(require|require_relative|load)$")) @import
