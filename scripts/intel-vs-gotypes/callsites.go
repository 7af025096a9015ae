// Prints every call in a Go module that go/types resolves to a function or method declared in
// the module: one line per call, "call path<TAB>call line<TAB>declaration path<TAB>declaration
// line", paths relative to the module's root. The declaration's line is that of its `func`
// keyword (a function or method), or of its name (an interface's method), as codesearch's
// definitions start.
//
// usage: go run scripts/intel-vs-gotypes/callsites.go ROOT
//
// Standard library only: every package of the module is parsed (tests included: a package's
// own tests with it, its `_test` package after it) and type-checked in import order; imports
// from outside the module come from the toolchain's own export data, else from source. Type
// errors (a feature newer than the toolchain, a dependency that is not there) are counted and
// skipped, so the rest of the package is still resolved.
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type unit struct {
	dir   string
	files []*ast.File
}

type checker struct {
	root, module string
	fset         *token.FileSet
	units        map[string]*unit // import path -> the package's files (tests of the package included)
	external     map[string]*unit // import path -> its `_test` package's files
	checked      map[string]*types.Package
	std          types.Importer
	source       types.Importer
	declLine     map[token.Pos]int // a function's name -> the line of its `func` keyword
	out          *bufio.Writer
	typeErrors   int
}

func (c *checker) Import(path string) (*types.Package, error) {
	if p, ok := c.checked[path]; ok {
		return p, nil
	}
	if u, ok := c.units[path]; ok {
		return c.check(path, u), nil
	}
	if p, err := c.std.Import(path); err == nil {
		return p, nil
	}
	return c.source.Import(path)
}

func (c *checker) check(path string, u *unit) *types.Package {
	if p, ok := c.checked[path]; ok {
		return p
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: c, Error: func(error) { c.typeErrors++ }}
	p, _ := conf.Check(path, c.fset, u.files, info)
	c.checked[path] = p
	c.calls(u.files, info)
	return p
}

// calls prints the calls in files that resolve to a function or method of the module.
func (c *checker) calls(files []*ast.File, info *types.Info) {
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fun := call.Fun
			for {
				p, ok := fun.(*ast.ParenExpr)
				if !ok {
					break
				}
				fun = p.X
			}
			switch x := fun.(type) {
			case *ast.IndexExpr: // a generic function instantiated explicitly
				fun = x.X
			case *ast.IndexListExpr:
				fun = x.X
			}
			var id *ast.Ident
			switch x := fun.(type) {
			case *ast.Ident:
				id = x
			case *ast.SelectorExpr:
				id = x.Sel
			default:
				return true
			}
			fn, ok := info.Uses[id].(*types.Func)
			if !ok || !fn.Pos().IsValid() {
				return true
			}
			decl := c.fset.Position(fn.Pos())
			declPath, ok := c.rel(decl.Filename)
			if !ok {
				return true
			}
			line := decl.Line
			if l, ok := c.declLine[fn.Origin().Pos()]; ok {
				line = l
			}
			// The line the call's expression starts on, as codesearch records it: in a chain
			// broken over lines (`RouteHeaders().\n\tRoute(…)`), the first line.
			at := c.fset.Position(call.Pos())
			callPath, _ := c.rel(at.Filename)
			fmt.Fprintf(c.out, "%s\t%d\t%s\t%d\n", callPath, at.Line, declPath, line)
			return true
		})
	}
}

func (c *checker) rel(file string) (string, bool) {
	r, err := filepath.Rel(c.root, file)
	if err != nil || strings.HasPrefix(r, "..") {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func modulePath(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "no go.mod at", root)
		os.Exit(2)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`)
		}
	}
	fmt.Fprintln(os.Stderr, "go.mod names no module")
	os.Exit(2)
	return ""
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: callsites ROOT")
		os.Exit(2)
	}
	root, _ := filepath.Abs(os.Args[1])
	fset := token.NewFileSet()
	c := &checker{
		root: root, module: modulePath(root), fset: fset,
		units: map[string]*unit{}, external: map[string]*unit{},
		checked: map[string]*types.Package{}, declLine: map[token.Pos]int{},
		std: importer.ForCompiler(fset, "gc", nil), source: importer.ForCompiler(fset, "source", nil),
		out: bufio.NewWriter(os.Stdout),
	}
	defer c.out.Flush()
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				c.declLine[fd.Name.Pos()] = fset.Position(fd.Pos()).Line
			}
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		imp := c.module
		if rel != "." {
			imp += "/" + filepath.ToSlash(rel)
		}
		units := c.units
		if strings.HasSuffix(f.Name.Name, "_test") {
			units = c.external
		}
		if f.Name.Name == "main" && rel == "." && !strings.HasSuffix(name, "_test.go") {
			// A program beside the library's root package: its own unit.
			imp += "#main"
		}
		u := units[imp]
		if u == nil {
			u = &unit{dir: dir}
			units[imp] = u
		}
		u.files = append(u.files, f)
		return nil
	})
	paths := make([]string, 0, len(c.units))
	for p := range c.units {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		c.check(p, c.units[p])
	}
	ext := make([]string, 0, len(c.external))
	for p := range c.external {
		ext = append(ext, p)
	}
	sort.Strings(ext)
	for _, p := range ext {
		c.check(p+"_test", c.external[p])
	}
	fmt.Fprintf(os.Stderr, "%d packages, %d test packages, %d type errors skipped\n",
		len(c.units), len(c.external), c.typeErrors)
}
