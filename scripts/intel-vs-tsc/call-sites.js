// Call sites resolved by the TypeScript compiler's type checker, for scripts/intel-vs-tsc.py.
//
// usage: node call-sites.js ROOT SOURCE_DIR...   (the `typescript` package on NODE_PATH)
//
// Type-checks the .ts/.tsx/.js files under the SOURCE_DIRs (with ROOT/tsconfig.json's options
// when there is one) and prints one line per call whose callee the checker resolves to a
// function, method or class declared with a body in those sources:
//   <call path> TAB <call line> TAB <target path> TAB <target name> TAB <target line>
// Paths are relative to ROOT; the target line is the line of the declaration's name. A call's
// line is the line its expression starts on, as codesearch records it. `new Foo()` targets the
// class `Foo`. Calls through an interface or a type without a body (`() => void` fields) and
// `super(...)` are left out: they have no definition to list.
"use strict";
const ts = require("typescript");
const fs = require("fs");
const path = require("path");

const [root, ...dirs] = process.argv.slice(2).map((p) => path.resolve(p));
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;
const files = [];
function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(p);
    } else if (SOURCE.test(entry.name) && !/\.d\.[mc]?ts$/.test(entry.name)) {
      files.push(p);
    }
  }
}
dirs.forEach(walk);
const inside = (f) => dirs.some((d) => f === d || f.startsWith(d + path.sep));

let options = {
  allowJs: true,
  checkJs: false,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  jsx: ts.JsxEmit.Preserve,
  skipLibCheck: true,
};
const config = path.join(root, "tsconfig.json");
if (fs.existsSync(config)) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  const parsed = ts.getParsedCommandLineOfConfigFile(config, {}, host);
  if (parsed) options = { ...parsed.options, allowJs: true, skipLibCheck: true };
}
options.noEmit = true;
const program = ts.createProgram(files, options);
const checker = program.getTypeChecker();

const rel = (f) => path.relative(root, f);
const lineOf = (sf, pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
const isFunctionValue = (n) =>
  n && (ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isClassExpression(n));

// The declaration with a body that a call of `symbol` runs, or null.
function target(symbol) {
  if (!symbol) return null;
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  for (const d of symbol.declarations || []) {
    if (
      ((ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d)) && d.body) ||
      ts.isClassDeclaration(d) ||
      ((ts.isVariableDeclaration(d) || ts.isPropertyDeclaration(d) || ts.isPropertyAssignment(d)) &&
        isFunctionValue(d.initializer))
    ) {
      if (d.name) return d;
    }
  }
  return null;
}

const out = [];
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || !inside(sf.fileName)) continue;
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      let callee = node.expression;
      if (ts.isPropertyAccessExpression(callee)) callee = callee.name;
      if (callee.kind !== ts.SyntaxKind.SuperKeyword) {
        const d = target(checker.getSymbolAtLocation(callee));
        const dsf = d && d.getSourceFile();
        if (d && !dsf.isDeclarationFile && inside(dsf.fileName)) {
          out.push(
            [
              rel(sf.fileName),
              lineOf(sf, node.getStart(sf)),
              rel(dsf.fileName),
              d.name.getText(dsf),
              lineOf(dsf, d.name.getStart(dsf)),
            ].join("\t"),
          );
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
