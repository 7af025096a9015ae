; JavaScript only (added to ecma.scm).

(field_definition
  property: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @def.method
