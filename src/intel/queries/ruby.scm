; Ruby: definitions, call sites, `require`s (captures as in rust.scm). `Foo.new` is turned
; into a call of the class `Foo` in code. A call written as a bare name (`save`) looks like a
; local variable: src/intel/ruby.rs finds those by the locals bound before them.

(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.method
(class name: (constant) @name) @def.class
(class name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @def.class
(module name: (constant) @name) @def.module
(module name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @def.module
; A constant (`VERSION = "1.2"`, `Shop::Order::LIMIT`); Ruby allows none inside a method.
(assignment left: (constant) @name) @def.const

(call receiver: (_) @qualifier method: (identifier) @name) @call
(call !receiver method: (identifier) @name) @call

(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list . (string) @import.path)
  (#match? @_require "^(require|require_relative|load)$")) @import

; `x = Foo.new`, `@app = Rake::Application.new` (@var with @var.name and @var.type): a call on
; the variable is a call on the class, to the end of the method (the class, for `@app`).
(assignment
  left: [(identifier) (instance_variable)] @var.name
  right: (call
    receiver: [(constant) (scope_resolution)] @var.type
    method: (identifier) @_new)
  (#eq? @_new "new")) @var
