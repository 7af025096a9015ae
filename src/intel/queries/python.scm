; Python: definitions, call sites, imports (captures as in rust.scm).

(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
; Names a module assigns at its top level: constants when written in capitals (`TIMEOUT = 30`),
; variables otherwise (`app = Flask(__name__)`).
(module
  (expression_statement
    (assignment left: (identifier) @name) @def.const)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
(module (expression_statement (assignment left: (identifier) @name) @def.variable))
; A class's own constants (`HTTPStatus.OK`, an enum's members).
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @def.const))
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(call function: (identifier) @name) @call
(call function: (attribute object: (_) @qualifier attribute: (identifier) @name)) @call

(import_statement) @import
(import_from_statement) @import

; `client = Client(url)`, `s = client.session()` (@var with @var.name and @var.type): a call on
; the name is a call on what the value returns (a chain, followed by the resolver).
(assignment left: (identifier) @var.name !type right: (call) @var.type) @var
; Annotated parameters and variables (`request: Request`, `transport: Optional[BaseTransport] =
; None`, `url: URL = URL(raw)`): a call on the name is a call on the annotation's class.
(typed_parameter (identifier) @var.name type: (type) @var.type) @var
(typed_default_parameter name: (identifier) @var.name type: (type) @var.type) @var
(assignment left: (identifier) @var.name type: (type) @var.type) @var
; `self.transport = transport`, `self.client = Client(url)` (@var.self): the attribute, reached
; as `self.client` in every method of the class, is what the value is.
(assignment
  left: (attribute object: (identifier) @var.self attribute: (identifier) @var.name)
  !type
  right: [(identifier) (call)] @var.type
  (#eq? @var.self "self")) @var
(assignment
  left: (attribute object: (identifier) @var.self attribute: (identifier) @var.name)
  type: (type) @var.type
  (#eq? @var.self "self")) @var
