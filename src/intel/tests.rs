use super::*;
use crate::chunk::{self, CodeLanguage, Language};
use std::time::Duration;

fn run(path: &str, text: &str) -> Extraction {
    let Language::Code(lang) = Language::detect(path, text) else {
        panic!("{path} is not code");
    };
    let tree = chunk::parse(lang, text, Duration::from_secs(5)).expect("parses");
    extract(lang, &tree, text, path)
}

fn defs(x: &Extraction) -> Vec<(String, &'static str)> {
    x.definitions
        .iter()
        .map(|d| (d.qualified.clone(), d.kind))
        .collect()
}

fn calls(x: &Extraction) -> Vec<(String, Option<String>, Option<String>)> {
    x.references
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                r.qualifier.clone(),
                r.enclosing
                    .map(|e| x.definitions[e as usize].qualified.clone()),
            )
        })
        .collect()
}

/// The qualifiers of the calls of `name`, in order.
fn qualifiers(x: &Extraction, name: &str) -> Vec<String> {
    x.references
        .iter()
        .filter(|r| r.name == name)
        .filter_map(|r| r.qualifier.clone())
        .collect()
}

#[test]
fn every_query_compiles() {
    for lang in CodeLanguage::ALL {
        if let Some(source) = query_source(lang) {
            tree_sitter::Query::new(&lang.grammar(), &source)
                .unwrap_or_else(|e| panic!("{}: {e}", lang.name()));
        }
    }
}

#[test]
fn rust_definitions_calls_and_uses() {
    let x = run(
        "src/stack.rs",
        r#"use crate::store::{self, Scope as S};
use super::util::*;
mod inner;

pub struct Stack<T> { items: Vec<T> }

impl<T> Stack<T> {
    /// Pushes.
    pub fn push(&mut self, x: T) {
        self.items.push(x);
        self.grow();
        helper(1);
        Stack::<T>::new();
    }
    fn grow(&mut self) {}
}

impl<T> std::fmt::Display for Stack<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "s") }
}

fn helper(n: u32) -> u32 { store::open(n) }
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Stack".to_owned(), "struct"),
            ("Stack::push".to_owned(), "method"),
            ("Stack::grow".to_owned(), "method"),
            ("Stack::fmt".to_owned(), "method"),
            ("helper".to_owned(), "function"),
        ]
    );
    let implements: Vec<Option<&str>> = x
        .definitions
        .iter()
        .map(|d| d.implements.as_deref())
        .collect();
    assert_eq!(implements, [None, None, None, Some("Display"), None]);
    let push = &x.definitions[1];
    assert_eq!(push.signature, "pub fn push(&mut self, x: T)");
    assert_eq!((push.start_line, push.end_line), (9, 14));
    let c = calls(&x);
    let push = Some("Stack::push".to_owned());
    // A field of `self` is written from its type, whose fields the resolver reads.
    assert!(c.contains(&("push".into(), Some("Stack.items".into()), push.clone())));
    assert!(c.contains(&("grow".into(), Some("Stack".into()), push.clone())));
    assert!(c.contains(&("helper".into(), None, push.clone())));
    assert!(c.contains(&("write!".into(), None, Some("Stack::fmt".into()))));
    assert!(c.contains(&("open".into(), Some("store".into()), Some("helper".into()))));
    let imports: Vec<(&str, &str)> = x
        .imports
        .iter()
        .map(|i| (i.specifier.as_str(), i.name.as_str()))
        .collect();
    assert_eq!(
        imports,
        [
            ("crate::store", "store"),
            ("crate::store::Scope", "S"),
            ("super::util::*", "*"),
            ("mod inner", "inner"),
        ]
    );
    assert_eq!(
        x.imports[3].candidates,
        ["/src/stack/inner.rs", "/src/stack/inner/mod.rs"]
    );
    assert_eq!(x.imports[0].candidates[0], "/src/store.rs");
}

#[test]
fn python_definitions_calls_and_imports() {
    let x = run(
        "pkg/auth/routes.py",
        r#"import os.path as osp
from . import models
from ..core import db, cache as c
from flask import *

class Login:
    RETRIES = 2
    name = "login"

    def post(self):
        self.check()
        user = models.find(osp.join("a"))
        return render(user)

    def check(self):
        pass

@app.route("/")
def login():
    limit = 3
    return Login().post()

MAX_TRIES = 3
app = make_app(Login)
if DEBUG:
    LEVEL = 1
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Login".to_owned(), "class"),
            ("Login.RETRIES".to_owned(), "const"),
            ("Login.post".to_owned(), "method"),
            ("Login.check".to_owned(), "method"),
            ("login".to_owned(), "function"),
            ("MAX_TRIES".to_owned(), "const"),
            ("app".to_owned(), "variable"),
        ]
    );
    let c = calls(&x);
    let post = Some("Login.post".to_owned());
    assert!(c.contains(&("check".into(), Some("Login".into()), post.clone())));
    assert!(c.contains(&("find".into(), Some("models".into()), post.clone())));
    assert!(c.contains(&("render".into(), None, post.clone())));
    assert!(c.contains(&("Login".into(), None, Some("login".into()))));
    assert!(c.contains(&("route".into(), Some("app".into()), None)));
    let find = |name: &str| {
        x.imports
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("{name} in {:#?}", x.imports))
    };
    assert_eq!(
        find("osp").candidates,
        ["os/path.py", "os/path/__init__.py"]
    );
    assert_eq!(
        find("models").candidates,
        [
            "/pkg/auth/models.py",
            "/pkg/auth/models/__init__.py",
            "/pkg/auth/__init__.py"
        ]
    );
    assert_eq!(find("c").candidates[0], "/pkg/core/cache.py");
    assert_eq!(find("db").candidates[2], "/pkg/core.py");
    assert_eq!(find("*").specifier, "flask");
}

#[test]
fn typescript_definitions_calls_and_imports() {
    let x = run(
        "src/users/service.ts",
        r#"import { Repo, find as findOne } from '../db/repo';
import * as log from './log.js';
import express from 'express';
export { helper } from './helper';

export interface Store { get(id: string): User; }

export class UserService {
  constructor(private repo: Repo) {}
  async byId(id: string) {
    log.info("by id");
    return this.load(id) ?? findOne(id);
  }
  private load = (id: string) => this.repo.get(id);
}

export const make = () => new UserService(new Repo());
function overloaded(a: string): void;
export const DEFAULTS = { retries: 2, delay: (n: number) => n * 2 };
const app = makeApp(() => start());
const fs = require('fs');
const { join } = require('path');
let counter = 0;
var legacy = require('legacy'), started = Date.now();
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Store".to_owned(), "interface"),
            ("Store.get".to_owned(), "method"),
            ("UserService".to_owned(), "class"),
            ("UserService.constructor".to_owned(), "method"),
            ("UserService.byId".to_owned(), "method"),
            ("UserService.load".to_owned(), "method"),
            ("make".to_owned(), "function"),
            ("overloaded".to_owned(), "function"),
            ("DEFAULTS".to_owned(), "const"),
            ("DEFAULTS.delay".to_owned(), "method"),
            ("app".to_owned(), "const"),
            ("counter".to_owned(), "variable"),
            ("started".to_owned(), "variable"),
        ]
    );
    let c = calls(&x);
    // A call in a constant's value is made by the constant.
    assert!(c.contains(&("start".into(), None, Some("app".into()))));
    let by_id = Some("UserService.byId".to_owned());
    assert!(c.contains(&("info".into(), Some("log".into()), by_id.clone())));
    assert!(c.contains(&("load".into(), Some("UserService".into()), by_id.clone())));
    assert!(c.contains(&("findOne".into(), None, by_id.clone())));
    assert!(c.contains(&("UserService".into(), None, Some("make".into()))));
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(find("findOne").candidates[0], "/src/db/repo.ts");
    assert_eq!(
        find("log").candidates[..2],
        [
            "/src/users/log.js".to_owned(),
            "/src/users/log.ts".to_owned()
        ]
    );
    // A package: resolved through `tsconfig.json`'s aliases, if any, when a question is asked.
    assert_eq!(find("express").candidates, ["bare:express"]);
    assert!(x.imports.iter().any(|i| i.specifier == "./helper"));
}

#[test]
fn javascript_require_and_prototype_methods() {
    let x = run(
        "lib/app.js",
        r#"const { Router } = require('./router');
const util = require('util');
function App() {}
App.prototype.listen = function () { return this.handle(); };
exports.create = function () { return new App(); };
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("App".to_owned(), "function"),
            ("App.listen".to_owned(), "method"),
            ("create".to_owned(), "function"),
        ]
    );
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(find("Router").candidates[0], "/lib/router.ts");
    assert_eq!(find("util").candidates, ["bare:util"]);
}

#[test]
fn rust_calls_in_macro_arguments_and_declared_types() {
    let x = run(
        "src/walk.rs",
        r#"fn scan(entry: &DirEntry, cache: &mut Arc<Cache>) -> String {
    assert!(starts_with_dash(entry.path()));
    let set = CommandSet::new(vec![1])?;
    let mut out = Output { n: 0 };
    out.write(&set.count());
    format!("{} {} {}", cache.get(1), Path::new("x").display(), items[0])
}
impl Alias {
    fn fmt(&self, f: &mut Formatter) -> fmt::Result {
        write!(f, "{} {}", self.name.lexeme(), config.color.paint(x).len())?;
        assert_eq!((a + b).len(), items[0].len());
        write!(f, "{}", Usage { long: false }.color_display(c))?;
        assert!(Query::<Vec<u8>>::from_request(r).is_ok() && n < i32::from(u8::MAX))
    }
}
"#,
    );
    let c = calls(&x);
    let scan = Some("scan".to_owned());
    assert!(
        c.contains(&("starts_with_dash".into(), None, scan.clone())),
        "{c:?}"
    );
    // Receivers by their declared type: a parameter, a struct literal; by what `Type::new()?`
    // returns (the resolver takes a `CommandSet` where the index lacks `new`).
    assert!(c.contains(&("path".into(), Some("DirEntry".into()), scan.clone())));
    assert!(c.contains(&("get".into(), Some("Cache".into()), scan.clone())));
    assert!(c.contains(&(
        "count".into(),
        Some("CommandSet::new()".into()),
        scan.clone()
    )));
    assert!(c.contains(&("write".into(), Some("Output".into()), scan.clone())));
    assert!(c.contains(&("new".into(), Some("Path".into()), scan.clone())));
    // A receiver in a macro's tokens is read back to its start, as it would be outside one.
    assert!(c.contains(&("display".into(), Some("Path::new()".into()), scan.clone())));
    let fmt = Some("Alias::fmt".to_owned());
    assert!(c.contains(&("lexeme".into(), Some("Alias.name".into()), fmt.clone())));
    assert!(c.contains(&("paint".into(), Some("config.color".into()), fmt.clone())));
    assert!(c.contains(&(
        "len".into(),
        Some("config.color.paint()".into()),
        fmt.clone()
    )));
    let unnamed = c
        .iter()
        .filter(|(n, q, _)| n == "len" && q.as_deref() == Some(extract::UNNAMED_RECEIVER))
        .count();
    assert_eq!(unnamed, 1, "{c:?}");
    // An index is one of the elements, a struct literal its type, as outside a macro.
    assert!(c.contains(&("len".into(), Some("items.[]".into()), fmt.clone())));
    assert!(c.contains(&("color_display".into(), Some("Usage".into()), fmt.clone())));
    // A path's type before its turbofish.
    assert!(
        c.contains(&("from_request".into(), Some("Query".into()), fmt.clone())),
        "{c:?}"
    );
    // A primitive type's function, which a crate's trait may give it.
    assert!(
        c.contains(&("from".into(), Some("i32".into()), fmt.clone())),
        "{c:?}"
    );
    // Inside a macro, a name before brackets or braces is no call.
    assert!(
        !c.iter().any(|(n, ..)| n == "items" || n == "Output"),
        "{c:?}"
    );
}

/// The receivers extraction writes for what loops, closures and `Some(x)` bind, for variables
/// bound to another name or a field, and for a slice's elements; the resolver reads `.[]` (an
/// element of what is before it) through the types' members ([`super::elements`]).
#[test]
fn rust_elements_options_and_aliases_are_written_as_receivers() {
    let x = run(
        "src/list.rs",
        r#"impl Justfile {
    fn list(&self, context: &Context, recipes: &[Recipe], names: Vec<Name>) {
        for recipe in self.public_recipes() { recipe.show(); }
        for (_name, recipe) in &self.recipes { recipe.name.lexeme(); }
        for (_i, item) in self.items.iter().enumerate() { item.show(); }
        for (a, b) in xs.iter().zip(&ys) { a.left(); b.right(); }
        self.tokens.iter().filter(|token| token.is_ok()).count();
        recipes.iter().map(|recipe| recipe.show());
        names.iter().fold(0, |n, name| name.len());
        if let Some(doc) = &self.doc { doc.lexeme(); }
        if let Some(token) = self.context() { token.lexeme(); }
        let config = &context.config;
        config.color.paint();
        let mut current = self;
        current.list();
        let compilation = Compiler::compile()?;
        compilation.root();
        let functions = Table::<Function>::default();
        functions.values().map(|f| f.body.run());
    }
}
"#,
    );
    let on = |name: &str| qualifiers(&x, name);
    assert_eq!(
        on("show"),
        [
            "Justfile.public_recipes().[]",
            "Justfile.items.iter().[]",
            "Recipe"
        ]
    );
    assert_eq!(
        on("lexeme"),
        [
            "Justfile.recipes.[].name",
            "Justfile.doc",
            "Justfile.context()"
        ]
    );
    assert_eq!(on("left"), ["xs.iter().[]"]);
    assert_eq!(on("right"), ["ys.[]"]);
    assert_eq!(on("is_ok"), ["Justfile.tokens.iter().[]"]);
    assert_eq!(on("len"), ["Name"]);
    assert_eq!(on("paint"), ["Context.config.color"]);
    assert_eq!(on("list"), ["Justfile"]);
    assert_eq!(on("root"), ["Compiler::compile()"]);
    assert_eq!(on("run"), ["Function.body"]);
}

#[test]
fn rust_names_patterns_bind_are_fields_and_untyped_ones_hide_outer_names() {
    let x = run(
        "src/node.rs",
        r#"impl Expression {
    fn tree(&self, token: &Token) {
        match self {
            Self::And { lhs, .. } => lhs.tree(),
            (Some(token), _) => token.lexeme(),
        }
        callback(|token| token.lexeme());
        token.lexeme();
        Keyword::Set.lexeme();
        assert_eq!(Self::X.lexeme(), kinds::Kind::A.lexeme());
    }
}
"#,
    );
    let c = calls(&x);
    let tree = Some("Expression::tree".to_owned());
    assert!(c.contains(&(
        "tree".into(),
        Some("Expression::And.lhs".into()),
        tree.clone()
    )));
    let lexemes: Vec<Option<&str>> = c
        .iter()
        .filter(|(n, ..)| n == "lexeme")
        .map(|(_, q, _)| q.as_deref())
        .collect();
    // An enum's variant (or a type's constant) is of its type.
    assert_eq!(
        lexemes,
        [
            Some("token"),
            Some("token"),
            Some("Token"),
            Some("Keyword"),
            Some("Expression"),
            Some("kinds::Kind")
        ]
    );
}

#[test]
fn typescript_private_methods_and_receivers_that_may_be_null() {
    let x = run(
        "source/core/Ky.ts",
        r#"export class Ky {
  #retry(fn: () => void) { return fn(); }
  fetch(state: State, user?: User) {
    this.#retry(() => {});
    state.assigned_!.set(1, true);
    user?.name.trim();
    const result = make();
    result.once = (event: string) => event;
  }
}
export const objectTraps = { get(state: State) { return latest(state); }, has: () => true };
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Ky".to_owned(), "class"),
            ("Ky.#retry".to_owned(), "method"),
            ("Ky.fetch".to_owned(), "method"),
            ("result.once".to_owned(), "method"),
            ("objectTraps".to_owned(), "const"),
            ("objectTraps.get".to_owned(), "method"),
            ("objectTraps.has".to_owned(), "method"),
        ]
    );
    let c = calls(&x);
    let fetch = Some("Ky.fetch".to_owned());
    assert!(
        c.contains(&("#retry".into(), Some("Ky".into()), fetch.clone())),
        "{c:?}"
    );
    assert!(c.contains(&("set".into(), Some("state.assigned_".into()), fetch.clone())));
    assert!(c.contains(&("trim".into(), Some("user.name".into()), fetch.clone())));
    assert!(c.contains(&("latest".into(), None, Some("objectTraps.get".into()))));
}

#[test]
fn go_definitions_calls_and_imports() {
    let x = run(
        "pkg/server/server.go",
        r#"package server

import (
	"fmt"
	st "example.com/app/pkg/store"
)

type Server struct{ db *st.DB }

type Handler interface { Serve() error }

func (s *Server) Start() error {
	s.listen()
	return st.Open(fmt.Sprint("x"))
}

func New() *Server { const local = 1; return &Server{} }

const MaxConns = 8

const (
	modeA = iota
	modeB
)

var ErrClosed = fmt.Errorf("closed")

var (
	hits int
)
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Server".to_owned(), "struct"),
            ("Handler".to_owned(), "interface"),
            ("Handler.Serve".to_owned(), "method"),
            ("Server.Start".to_owned(), "method"),
            ("New".to_owned(), "function"),
            ("MaxConns".to_owned(), "const"),
            ("modeA".to_owned(), "const"),
            ("modeB".to_owned(), "const"),
            ("ErrClosed".to_owned(), "variable"),
            ("hits".to_owned(), "variable"),
        ]
    );
    let c = calls(&x);
    let start = Some("Server.Start".to_owned());
    // The receiver is declared a `*Server`.
    assert!(c.contains(&("listen".into(), Some("Server".into()), start.clone())));
    assert!(c.contains(&("Open".into(), Some("st".into()), start.clone())));
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(find("st").candidates, ["go:example.com/app/pkg/store"]);
    assert_eq!(find("fmt").candidates, ["go:fmt"]);
}

#[test]
fn a_file_that_does_not_parse_well_still_gives_what_it_can() {
    let x = run(
        "src/broken.ts",
        "function ok() { call(); }\nfunction broken( {\n",
    );
    assert_eq!(x.definitions[0].qualified, "ok");
    assert_eq!(x.references[0].name, "call");
}

/// A chunker fixture, extracted.
fn fixture(name: &str) -> Extraction {
    let path = format!("{}/tests/fixtures/chunk/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    run(name, &text)
}

fn has<T: PartialEq + std::fmt::Debug>(all: &[T], want: &[T]) {
    for w in want {
        assert!(all.contains(w), "{w:?} not in {all:#?}");
    }
}

fn call(
    name: &str,
    qualifier: Option<&str>,
    enclosing: &str,
) -> (String, Option<String>, Option<String>) {
    (
        name.to_owned(),
        qualifier.map(str::to_owned),
        Some(enclosing.to_owned()),
    )
}

fn def(qualified: &str, kind: &'static str) -> (String, &'static str) {
    (qualified.to_owned(), kind)
}

fn import_of<'x>(x: &'x Extraction, specifier: &str) -> &'x Import {
    x.imports
        .iter()
        .find(|i| i.specifier == specifier)
        .unwrap_or_else(|| panic!("no import {specifier}: {:#?}", x.imports))
}

#[test]
fn java_classes_constructors_calls_and_imports() {
    let x = fixture("BoundedStack.java");
    assert_eq!(
        defs(&x),
        [
            def("BoundedStack", "class"),
            def("BoundedStack.BoundedStack", "constructor"),
            def("BoundedStack.push", "method"),
            def("BoundedStack.pop", "method"),
            def("BoundedStack.size", "method"),
            def("BoundedStack.iterator", "method"),
            def("BoundedStack.Mode", "enum"),
            def("BoundedStack.Mode.allowsOverflow", "method"),
            def("Sized", "interface"),
            def("Sized.size", "method"),
        ]
    );
    has(
        &calls(&x),
        &[
            call(
                "IllegalArgumentException",
                None,
                "BoundedStack.BoundedStack",
            ),
            // `items` is a `List<T>` field: the call is on the type.
            call("add", Some("List"), "BoundedStack.push"),
            call("remove", Some("List"), "BoundedStack.pop"),
            call("ArrayList", None, "BoundedStack"),
        ],
    );
    let list = import_of(&x, "java.util.List");
    assert_eq!(list.name, "List");
    assert_eq!(list.candidates[0], "java/util/List.java");
    let sig = &x.definitions[2].signature;
    assert_eq!(sig, "public boolean push(T item)");
}

#[test]
fn calls_on_declared_variables_are_calls_on_their_types() {
    let x = run(
        "src/A.java",
        "class A {\n  Cache cache;\n  void run(JsonReader in, int n) {\n    JsonReader r = open();\n    r.peek();\n    in.skip();\n    load().parse();\n    for (Item it : items) { it.save(); }\n    this.cache.clear();\n  }\n  void other() { r.peek(); }\n}\n",
    );
    assert_eq!(
        calls(&x),
        [
            call("open", None, "A.run"),
            call("peek", Some("JsonReader"), "A.run"),
            call("skip", Some("JsonReader"), "A.run"),
            // A receiver that is a call is written out for the resolver to follow.
            call("parse", Some("load()"), "A.run"),
            call("load", None, "A.run"),
            call("save", Some("Item"), "A.run"),
            call("clear", Some("Cache"), "A.run"),
            // `r` is not declared here.
            call("peek", Some("r"), "A.other"),
        ]
    );
    let x = run(
        "src/B.cs",
        "class B {\n  private readonly Store _store;\n  void Run(Reader reader) {\n    var x = Make();\n    reader.Read();\n    _store.Save();\n    x.Go();\n  }\n}\n",
    );
    assert_eq!(
        calls(&x),
        [
            call("Make", None, "B.Run"),
            call("Read", Some("Reader"), "B.Run"),
            call("Save", Some("Store"), "B.Run"),
            // `var x = Make();`: what `Make()` returns, which the resolver follows.
            call("Go", Some("Make()"), "B.Run"),
        ]
    );
}

#[test]
fn go_calls_on_declared_receivers_parameters_and_locals_name_their_types() {
    let x = run(
        "mux.go",
        r#"package chi

import "net/http"

func (mx *Mux) Handle(pattern string, h http.Handler) {
	mx.handle(pattern, h)
	tr := &node{}
	tr.InsertRoute(pattern)
	var ctx Context
	ctx.Reset()
	items := []string{}
	mx.routes.Walk(items)
	r := NewRouter()
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		w.Write(nil)
		r.Context()
	})
	r.Post("/")
	var err error
	err.Error()
}
"#,
    );
    let handle = "Mux.Handle";
    assert_eq!(
        calls(&x),
        [
            call("handle", Some("Mux"), handle),
            call("InsertRoute", Some("node"), handle),
            call("Reset", Some("Context"), handle),
            // A field's type is not followed.
            call("Walk", Some("mx.routes"), handle),
            call("NewRouter", None, handle),
            // `r` is what `NewRouter()` returns, which the resolver reads from its signature.
            call("Get", Some("NewRouter()"), handle),
            call("Write", Some("http.ResponseWriter"), handle),
            call("Context", Some("http.Request"), handle),
            call("Post", Some("NewRouter()"), handle),
            // A builtin type names no definition.
            call("Error", Some("err"), handle),
        ]
    );
}

#[test]
fn java_static_finals_and_csharp_consts_are_constants() {
    let x = run(
        "src/Limits.java",
        "class Limits {\n  public static final int MAX_DEPTH = compute(4);\n  private static int count;\n  private final String name = \"x\";\n  static final long A = 1, B = 2;\n}\n",
    );
    assert_eq!(
        defs(&x),
        [
            def("Limits", "class"),
            def("Limits.MAX_DEPTH", "const"),
            def("Limits.A", "const"),
            def("Limits.B", "const"),
        ]
    );
    has(&calls(&x), &[call("compute", None, "Limits.MAX_DEPTH")]);
    let x = run(
        "src/Limits.cs",
        "class Limits {\n  public const int MaxDepth = 4;\n  static readonly int Other = 5;\n  int count;\n}\n",
    );
    assert_eq!(
        defs(&x),
        [def("Limits", "class"), def("Limits.MaxDepth", "const")]
    );
}

#[test]
fn java_static_and_wildcard_imports() {
    let x = run(
        "src/App.java",
        "import static com.acme.util.Strings.trim;\nimport static com.acme.Math.*;\nimport com.acme.store.*;\nclass App { void run() { trim(\"x\"); } }\n",
    );
    let trim = import_of(&x, "com.acme.util.Strings.trim");
    assert_eq!(
        (trim.name.as_str(), trim.candidates[0].as_str()),
        ("trim", "com/acme/util/Strings.java")
    );
    let math = import_of(&x, "com.acme.Math.*");
    assert_eq!(
        (math.name.as_str(), math.candidates[0].as_str()),
        ("*", "com/acme/Math.java")
    );
    let package = import_of(&x, "com.acme.store.*");
    assert!(package.candidates.is_empty(), "{package:?}");
}

#[test]
fn csharp_types_members_and_usings() {
    let x = fixture("Inventory.cs");
    assert_eq!(
        defs(&x),
        [
            def("Inventory", "class"),
            def("Inventory.Inventory", "constructor"),
            def("Inventory.Count", "property"),
            def("Inventory.Receive", "method"),
            def("Inventory.TryShip", "method"),
            def("IClock", "interface"),
            def("IClock.Now", "property"),
            def("Shipment", "class"),
        ]
    );
    has(
        &calls(&x),
        &[
            call("ArgumentOutOfRangeException", None, "Inventory.Receive"),
            call("GetValueOrDefault", Some("Dictionary"), "Inventory.TryShip"),
        ],
    );
    let using = import_of(&x, "System.Collections.Generic");
    assert!(using.name.is_empty() && using.candidates.is_empty());
}

#[test]
fn c_functions_types_macros_and_includes() {
    let h = fixture("ring.h");
    assert_eq!(
        defs(&h),
        [
            def("ring", "struct"),
            def("ring_status", "type"),
            def("RING_IS_EMPTY", "macro"),
            def("ring_free", "function"),
        ]
    );
    let c = fixture("ring.c");
    assert_eq!(
        defs(&c),
        [
            def("ring_init", "function"),
            def("ring_push", "function"),
            def("ring_reset", "function"),
            def("ring_free_all", "function"),
        ]
    );
    has(
        &calls(&c),
        &[
            call("malloc", None, "ring_init"),
            call("ring_free", None, "ring_push"),
            call("ring_reset", None, "ring_free_all"),
        ],
    );
    let local = import_of(&c, "ring.h");
    assert_eq!(
        (local.name.as_str(), local.candidates.as_slice()),
        ("*", ["/ring.h".to_owned(), "ring.h".to_owned()].as_slice())
    );
    assert!(import_of(&c, "stdlib.h").candidates.is_empty());
}

#[test]
fn a_header_is_cpp_when_it_reads_like_cpp() {
    let c = "struct a { int x; };\nint f(void);\n";
    let cpp = "namespace geo {\nclass Shape { public: double area() const { return 0; } };\n}\n";
    assert_eq!(Language::detect("a.h", c), Language::Code(CodeLanguage::C));
    assert_eq!(
        Language::detect("a.h", cpp),
        Language::Code(CodeLanguage::Cpp)
    );
    assert_eq!(
        defs(&run("include/geo/shape.h", cpp)),
        [
            def("geo::Shape", "class"),
            def("geo::Shape::area", "method")
        ]
    );
}

#[test]
fn cpp_namespaces_classes_and_methods_defined_outside_them() {
    let x = fixture("shapes.cpp");
    assert_eq!(
        defs(&x),
        [
            def("geo::Shape", "class"),
            def("geo::Shape::~Shape", "method"),
            def("geo::Circle", "class"),
            def("geo::Circle::Circle", "constructor"),
            def("geo::Circle::area", "method"),
            def("geo::total_area", "function"),
            def("geo::Circle::circumference", "method"),
        ]
    );
    has(&calls(&x), &[call("area", Some("s"), "geo::total_area")]);
    let x = run(
        "src/stack.cpp",
        "void Stack::push(int x) { this->grow(); util::log(x); auto s = new Stack(); }\n",
    );
    assert_eq!(
        calls(&x),
        [
            call("grow", Some("Stack"), "Stack::push"),
            call("log", Some("util"), "Stack::push"),
            call("Stack", None, "Stack::push"),
        ]
    );
}

#[test]
fn cpp_export_macros_before_a_class_name_are_not_the_name() {
    let text = "namespace leveldb {\n\
                class LEVELDB_EXPORT Status {\n public:\n  static Status OK() { return Status(); }\n  \
                const char* data() const { return 0; }\n};\n\
                struct LEVELDB_EXPORT\n    Options final : Base {\n  int size() const { return 1; }\n};\n\
                class RGB { int r; };\n}\n";
    let x = run("include/leveldb/status.h", text);
    assert_eq!(
        defs(&x),
        [
            def("leveldb::Status", "class"),
            def("leveldb::Status::OK", "method"),
            def("leveldb::Status::data", "method"),
            def("leveldb::Options", "struct"),
            def("leveldb::Options::size", "method"),
            def("leveldb::RGB", "class"),
        ]
    );
    // Lines are the original's: the macro's line break is kept.
    let size = x
        .definitions
        .iter()
        .find(|d| d.name == "size")
        .expect("size");
    assert_eq!(size.start_line, 9);
}

#[test]
fn cpp_calls_on_declared_variables_are_calls_on_their_type() {
    let text = "class DBImpl {\n  void Get(const Slice& key, Iterator* it);\n  MemTable* mem_;\n  \
                void Compact() { mem_->Ref(); this->mem_->Unref(); }\n};\n\
                void DBImpl::Get(const Slice& key, Iterator* it) {\n  Status s = Lookup(key);\n  \
                if (!s.ok()) return;\n  it->Seek(key.data());\n  std::string buf;\n  buf.size();\n  \
                auto any = Make();\n  any.run();\n  int n = 0;\n}\n";
    let x = run("db/db_impl.cc", text);
    has(
        &calls(&x),
        &[
            call("Ref", Some("MemTable"), "DBImpl::Compact"),
            call("Unref", Some("MemTable"), "DBImpl::Compact"),
            call("ok", Some("Status"), "DBImpl::Get"),
            call("Seek", Some("Iterator"), "DBImpl::Get"),
            call("data", Some("Slice"), "DBImpl::Get"),
            call("size", Some("std::string"), "DBImpl::Get"),
            // `auto` says nothing: the receiver stays the variable.
            call("run", Some("any"), "DBImpl::Get"),
        ],
    );
}

#[test]
fn ruby_modules_classes_methods_and_requires() {
    let x = fixture("order.rb");
    assert_eq!(
        defs(&x),
        [
            def("Shop", "module"),
            def("Shop::Order", "class"),
            def("Shop::Order::initialize", "method"),
            def("Shop::Order::add", "method"),
            def("Shop::Order::total", "method"),
            def("Shop::Order::to_json", "method"),
            def("Shop::Order::from_json", "method"),
        ]
    );
    has(
        &calls(&x),
        &[
            // `Money.new(price)` constructs a `Money`.
            call("Money", None, "Shop::Order::add"),
            call("parse", Some("JSON"), "Shop::Order::from_json"),
            call("sum", Some("items"), "Shop::Order::total"),
        ],
    );
    assert_eq!(import_of(&x, "money").candidates, ["/money.rb"]);
    assert_eq!(
        import_of(&x, "json").candidates,
        ["/lib/json.rb", "/json.rb"]
    );
    assert_eq!(x.definitions[1].signature, "class Order");
}

#[test]
fn ruby_constants_are_definitions() {
    let x = run(
        "lib/shop.rb",
        "module Shop\n  VERSION = \"1.2\"\n  class Order\n    LIMIT = compute(3)\n    def add\n      count = LIMIT\n    end\n  end\nend\n",
    );
    assert_eq!(
        defs(&x),
        [
            def("Shop", "module"),
            def("Shop::VERSION", "const"),
            def("Shop::Order", "class"),
            def("Shop::Order::LIMIT", "const"),
            def("Shop::Order::add", "method"),
        ]
    );
    has(&calls(&x), &[call("compute", None, "Shop::Order::LIMIT")]);
}

#[test]
fn ruby_bare_names_are_calls_unless_a_local_is_bound() {
    let text = "class Task\n  def invoke(*args)\n    chain = build_chain\n    chain.run\n    \
                options[:trace] = true if trace?\n    items.each do |item|\n      count = item\n      \
                count\n      prepare\n    end\n    count\n    x = x\n    begin\n      sync\n    \
                rescue => error\n      error\n    end\n    loop { tick }\n  end\n\n  \
                def other(a, b = default_b, c: 1)\n    a + b + c + chain\n  end\nend\n";
    let x = run("lib/task.rb", text);
    let found = calls(&x);
    let bare: Vec<&str> = found
        .iter()
        .filter(|(_, q, _)| q.is_none())
        .map(|(n, _, _)| n.as_str())
        .collect();
    // Every name read before anything binds it is a call; parameters, assignments' targets,
    // block parameters and rescued errors bind locals; a block's locals end with the block,
    // and `def` starts afresh (`chain` in `other` is a call again).
    assert_eq!(
        bare,
        [
            "build_chain",
            "options",
            "trace?",
            "items",
            "prepare",
            "count",
            "sync",
            "loop",
            "tick",
            "default_b",
            "chain"
        ]
    );
    has(
        &found,
        &[
            call("build_chain", None, "Task::invoke"),
            call("chain", None, "Task::other"),
        ],
    );
}

#[test]
fn ruby_variables_assigned_a_new_object_call_its_class() {
    let text = "class AppTest\n  def setup\n    @app = Rake::Application.new\n  end\n\n  \
                def test_run\n    @app.run\n    list = FileList.new\n    list.include(\"*.c\")\n    \
                other.include(1)\n  end\n\n  def test_other\n    list.clear\n  end\nend\n";
    let x = run("test/app_test.rb", text);
    has(
        &calls(&x),
        &[
            call("Application", Some("Rake"), "AppTest::setup"),
            // An instance variable is typed in every method of its class.
            call("run", Some("Application"), "AppTest::test_run"),
            call("include", Some("FileList"), "AppTest::test_run"),
            call("include", Some("other"), "AppTest::test_run"),
            // A local is typed to the end of its own method only.
            call("clear", Some("list"), "AppTest::test_other"),
        ],
    );
}

/// The trait each method's `impl` implements, in order.
fn methods_implement(x: &Extraction) -> Vec<Option<&str>> {
    x.definitions
        .iter()
        .filter(|d| d.kind == "method")
        .map(|d| d.implements.as_deref())
        .collect()
}

#[test]
fn rust_calls_record_the_type_their_first_argument_is_written_as() {
    let x = run(
        "src/value.rs",
        r#"pub struct Value;
impl From<&'static str> for Value { fn from(s: &'static str) -> Self { Value } }
impl<'a> std::convert::From<Cow<'a, str>> for Value { fn from(s: Cow<'a, str>) -> Self { Value } }
fn f(name: &str) {
    Value::from("a");
    Value::from(format!("{name}"));
    Value::from(name.to_string());
    Value::from(String::new());
    Value::from(true);
    Value::from(vec![1]);
    Value::from(-1);
    Value::from(());
    Value::from(name);
    Value::from("a".len());
    assert_eq!(Value::from("b"), Value::from(format!("c")));
    assert_eq!(Value::from("b".len()), Value::from(x));
}
"#,
    );
    assert_eq!(
        methods_implement(&x),
        [Some("From<&str>"), Some("From<Cow<str>>")]
    );
    let written: Vec<Option<&str>> = x
        .references
        .iter()
        .filter(|r| r.name == "from")
        .map(|r| r.argument.as_deref())
        .collect();
    assert_eq!(
        written,
        [
            Some("&str"),
            Some("String"),
            Some("String"),
            Some("String"),
            Some("bool"),
            Some("Vec"),
            Some("integer"),
            Some("()"),
            None,
            None,
            // In a macro's tokens.
            Some("&str"),
            Some("String"),
            None,
            None,
        ]
    );
}

#[test]
fn a_traits_type_arguments_are_kept_without_their_lifetimes() {
    let x = run(
        "src/value.rs",
        "pub struct Value;\nimpl<'src> From<Token<'src>> for Value { fn from(t: Token<'src>) -> Self { Value } }\nimpl From<HashMap<&'static str, Vec<u8>>> for Value { fn from(m: HashMap<&'static str, Vec<u8>>) -> Self { Value } }\n",
    );
    assert_eq!(
        methods_implement(&x),
        [Some("From<Token>"), Some("From<HashMap<&str, Vec<u8>>>")]
    );
}

#[test]
fn calls_count_their_arguments_where_overloads_exist() {
    let args = |path: &str, text: &str| -> Vec<(String, Option<u16>)> {
        run(path, text)
            .references
            .into_iter()
            .map(|r| (r.name, r.args))
            .collect()
    };
    assert_eq!(
        args(
            "src/Reader.cs",
            "class R { void M() { Create(this, \"m\"); x.Flush(); var o = new Options { D = 2 }; \
             Log(/* none */ ); } }\n"
        ),
        [
            ("Create".to_owned(), Some(2)),
            ("Flush".to_owned(), Some(0)),
            ("Options".to_owned(), Some(0)),
            ("Log".to_owned(), Some(0)),
        ]
    );
    assert_eq!(
        args(
            "src/A.java",
            "class A { void m() { write(a, b, c); new Stack<String>(n); } }\n"
        ),
        [("write".to_owned(), Some(3)), ("Stack".to_owned(), Some(1))]
    );
    // A language without overloads counts nothing.
    assert_eq!(
        args("src/a.py", "def f():\n    g(1, 2)\n"),
        [("g".to_owned(), None)]
    );
}

#[test]
fn ruby_super_calls_the_enclosing_method() {
    let text =
        "class Dsl < TestCase\n  def setup\n    super\n    items.each { super(1) }\n  end\nend\n";
    let x = run("test/dsl.rb", text);
    let supers: Vec<(String, Option<String>, Option<String>)> = calls(&x)
        .into_iter()
        .filter(|(_, q, _)| q.as_deref() == Some("super"))
        .collect();
    assert_eq!(
        supers,
        [
            call("setup", Some("super"), "Dsl::setup"),
            call("setup", Some("super"), "Dsl::setup"),
        ]
    );
}

#[test]
fn a_components_scripts_are_extracted_at_their_own_lines() {
    let text = r#"<template>
  <UserCard v-for="u in users" :user="u" @click="select(u)" />
</template>

<script setup lang="ts">
import { ref } from 'vue'
import UserCard from './UserCard.vue'
import { listUsers } from '../api/users'

const users = ref<User[]>([])

async function load(q: string) {
  users.value = await listUsers(q)
}

function select(u: User) {
  emit('select', u)
}
</script>

<style scoped>
.card { margin: 0 }
</style>
"#;
    let a = crate::parse::analyze(
        "src/components/UserList.vue",
        text,
        &chunk::ChunkOptions::default(),
    );
    assert_eq!(a.language, Language::Component(CodeLanguage::TypeScript));
    assert_eq!(a.language.name("src/components/UserList.vue"), "vue");
    let x = a.intel;
    let lines: Vec<(String, &str, u32, u32)> = x
        .definitions
        .iter()
        .map(|d| (d.qualified.clone(), d.kind, d.start_line, d.end_line))
        .collect();
    assert_eq!(
        lines,
        [
            ("users".to_owned(), "const", 10, 10),
            ("load".to_owned(), "function", 12, 14),
            ("select".to_owned(), "function", 16, 18),
            // The file is a component, named as its tags name it.
            ("UserList".to_owned(), "component", 1, 23),
        ]
    );
    assert_eq!(x.definitions[3].signature, "<UserList>");
    let c = calls(&x);
    assert!(c.contains(&("listUsers".into(), None, Some("load".into()))));
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(
        find("UserCard").candidates[0],
        "/src/components/UserCard.vue"
    );
    assert_eq!(find("listUsers").candidates[0], "/src/api/users.ts");
    // The template's calls are the component's (its definition, the fourth), at their lines.
    let select = x
        .references
        .iter()
        .find(|r| r.name == "select")
        .expect("select");
    assert_eq!((select.line, select.enclosing), (2, Some(3)));
    // A tag calls the component it names.
    let card = x
        .references
        .iter()
        .find(|r| r.name == "UserCard")
        .expect("UserCard");
    assert_eq!((card.line, card.enclosing), (2, Some(3)));

    // Options (`export default {…}`, `defineComponent({…})`): the members, named as their
    // chunks define them.
    let options = "<script lang=\"ts\">\nexport default defineComponent({\n  data() { return { n: 0 } },\n  methods: {\n    inc() { this.n++ },\n  },\n})\n</script>\n";
    let a = crate::parse::analyze("Counter.vue", options, &chunk::ChunkOptions::default());
    let names: Vec<&str> = a
        .intel
        .definitions
        .iter()
        .map(|d| d.qualified.as_str())
        .collect();
    assert_eq!(names, ["data", "inc", "Counter"]);
    // A directory's `index.vue` is the directory's component.
    let a = crate::parse::analyze(
        "src/components/Pagination/index.vue",
        options,
        &chunk::ChunkOptions::default(),
    );
    assert_eq!(
        a.intel.definitions.last().map(|d| d.name.as_str()),
        Some("Pagination")
    );
    assert_eq!(a.chunks.len(), 1);
    assert_eq!(a.chunks[0].defines, ["data", "inc"]);
}

#[test]
fn a_components_template_calls_what_its_expressions_call_and_the_handlers_it_names() {
    let calls_in = |path: &str, text: &str| -> Vec<(String, Option<String>, u32)> {
        let a = crate::parse::analyze(path, text, &chunk::ChunkOptions::default());
        let mut c: Vec<_> = a
            .intel
            .references
            .iter()
            // The file's top level and the component's own: the template's.
            .filter(|r| {
                r.enclosing
                    .is_none_or(|e| a.intel.definitions[e as usize].kind == "component")
            })
            .map(|r| (r.name.clone(), r.qualifier.clone(), r.line))
            .collect();
        c.sort();
        c
    };
    let vue = r#"<template>
  <form @submit.prevent="store.save">
    <li v-for="(u, i) in sorted(users)" :class="{ active: isActive(u) }" @click="select">
      {{ format(u.joined) }} <button @click="() => open(u.id)">open</button>
    </li>
    <input v-model="query" :placeholder='label("search")' /> <user-card :user="query" />
    <Transition><KeepAlive /></Transition> <!-- <OldCard /> --> <svg-icon /> <pagination /> <Tab />
    <b v-if="rows.length<Max && pick()[0]<Limit">{{ (n)<Max }}</b>
  </form>
</template>

<script setup>
import Pagination from './Pagination.vue'
import { Tab } from './Tabs'
function select() {}
</script>

<style>
.active { color: red }
</style>
"#;
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        calls_in("src/List.vue", vue),
        [
            // Components by their tags: not the built-ins, not in comments, and a one-word
            // tag in lower case when the script imports it (`<form>` is HTML's). A `<` in an
            // expression (`n<Max`) opens no tag.
            ("Pagination".to_owned(), None, 7),
            ("SvgIcon".to_owned(), None, 7),
            // A named import keeps its name (the module `./Tabs` is no component `Tab`).
            ("Tab".to_owned(), None, 7),
            ("UserCard".to_owned(), None, 6),
            ("format".to_owned(), None, 4),
            ("isActive".to_owned(), None, 3),
            ("label".to_owned(), None, 6),
            ("open".to_owned(), None, 4),
            ("pick".to_owned(), None, 8),
            ("save".to_owned(), some("store"), 2),
            ("select".to_owned(), None, 3),
            ("sorted".to_owned(), None, 3),
        ]
    );
    let svelte = r#"<script>
  let { items, children } = $props();
  function reset() {}
</script>

{#if ready()}
  {#each visible(items) as item, i (item.id)}
    <button on:click|preventDefault={reset} onclick={() => inc(i)}>{label(item)}</button>
  {:else}
    <p>{$t('empty')}</p> <Icon.Close /> <svelte:fragment /> {#if i<Max}<br />{/if}
  {/each}
{/if}
{@render children()}

<style>
  p { margin: 0 }
</style>
"#;
    assert_eq!(
        calls_in("src/List.svelte", svelte),
        [
            // The script's own top-level call.
            ("$props".to_owned(), None, 2),
            ("$t".to_owned(), None, 10),
            ("Close".to_owned(), some("Icon"), 10),
            ("children".to_owned(), None, 13),
            ("inc".to_owned(), None, 8),
            ("label".to_owned(), None, 8),
            ("ready".to_owned(), None, 6),
            ("reset".to_owned(), None, 8),
            ("visible".to_owned(), None, 7),
        ]
    );
}

#[test]
fn an_astro_components_frontmatter_is_its_code_and_its_expressions_call_it() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/chunk/Card.astro",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture");
    let a = crate::parse::analyze(
        "src/components/Card.astro",
        &text,
        &chunk::ChunkOptions::default(),
    );
    assert_eq!(a.language, Language::Component(CodeLanguage::TypeScript));
    assert_eq!(a.language.name("src/components/Card.astro"), "astro");
    let x = a.intel;
    let defs: Vec<(&str, u32)> = x
        .definitions
        .iter()
        .map(|d| (d.qualified.as_str(), d.start_line))
        .collect();
    assert_eq!(defs, [("Props", 6), ("readingTime", 15), ("Card", 1)]);
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(find("Layout").candidates[0], "/src/layouts/Layout.astro");
    let calls: Vec<(&str, u32)> = x
        .references
        .iter()
        .filter(|r| {
            r.enclosing
                .is_none_or(|e| x.definitions[e as usize].kind == "component")
        })
        .map(|r| (r.name.as_str(), r.line))
        .collect();
    for call in [
        ("formatDate", 24),
        ("readingTime", 24),
        ("map", 26),
        ("toUpperCase", 26),
        ("Layout", 21),
    ] {
        assert!(calls.contains(&call), "{call:?} in {calls:?}");
    }
    // The client script after the markup is code too.
    assert!(calls.contains(&("forEach", 32)), "{calls:?}");
}

#[test]
fn an_mdx_pages_esm_is_its_imports_and_its_tags_and_expressions_its_calls() {
    let text = r#"---
title: Cards
---
import { Card, CardGrid } from '@acme/ui';
import Aside from '../components/Aside.astro';
export const year = thisYear();

# Cards

Use `<Card>` for a link; never `<Old />`.

```mdx
<Tabs>{tabs()}</Tabs>
```

<CardGrid>
  <Card title="A">{format(year)}</Card>
</CardGrid>

<Aside>a<b>b</b> and x<Max</Aside>
"#;
    let a = crate::parse::analyze("docs/cards.mdx", text, &chunk::ChunkOptions::default());
    assert_eq!(a.language, Language::Markdown);
    assert!(!a.chunks.is_empty());
    let x = a.intel;
    let mut imports: Vec<(&str, &str)> = x
        .imports
        .iter()
        .map(|i| (i.name.as_str(), i.specifier.as_str()))
        .collect();
    imports.sort();
    assert_eq!(
        imports,
        [
            ("Aside", "../components/Aside.astro"),
            ("Card", "@acme/ui"),
            ("CardGrid", "@acme/ui")
        ]
    );
    let defs: Vec<&str> = x.definitions.iter().map(|d| d.qualified.as_str()).collect();
    assert_eq!(defs, ["year"]);
    let mut calls: Vec<(&str, u32)> = x
        .references
        .iter()
        .map(|r| (r.name.as_str(), r.line))
        .collect();
    calls.sort();
    // Not the tags and calls in code (`<Card>`, `<Old />`, `<Tabs>`, `tabs()`), nor `x<Max`.
    assert_eq!(
        calls,
        [
            ("Aside", 20),
            ("Card", 17),
            ("CardGrid", 16),
            ("format", 17),
            ("thisYear", 6)
        ]
    );
}

#[test]
fn receivers_that_are_calls_are_written_as_their_chains() {
    // Each (name, qualifier) is among the calls `text` makes.
    let has = |path: &str, text: &str, want: &[(&str, &str)]| {
        let x = run(path, text);
        let got: Vec<(&str, Option<&str>)> = x
            .references
            .iter()
            .map(|r| (r.name.as_str(), r.qualifier.as_deref()))
            .collect();
        for (name, qualifier) in want {
            assert!(
                got.contains(&(*name, Some(*qualifier))),
                "{name} on {qualifier} in {got:?}"
            );
        }
    };
    // Rust: paths, `.await` and `?` dropped, `self` as its type, a variable bound to a chain
    // followed to the type the chain starts from.
    has(
        "src/lib.rs",
        "impl App {\n    async fn run(&self, c: Client, rx: Receiver) -> Result<(), E> {\n        Router::new().route(\"/\", h).layer(l);\n        let res = c.get(u).await?;\n        res.text();\n        self.inner().close();\n        items[0].clone().len();\n        let rx = rx.clone();\n        rx.recv();\n        Ok(())\n    }\n}\n",
        &[
            ("layer", "Router::new().route()"),
            ("route", "Router::new()"),
            ("text", "Client.get()"),
            ("close", "App.inner()"),
            ("clone", "items.[]"),
            ("len", "items.[].clone()"),
            // A variable shadowing itself: the one before it in its value.
            ("clone", "Receiver"),
            ("recv", "Receiver.clone()"),
        ],
    );
    // TypeScript: `new` gives the class, a declared parameter its type; Go's and Python's
    // selectors; Java's invocations.
    has(
        "src/a.ts",
        "export function f(db: Db) {\n  new Query(db).where(a).run();\n  (await db.open()).close();\n}\n",
        &[
            ("run", "Query.where()"),
            ("where", "Query"),
            ("close", "Db.open()"),
        ],
    );
    // TypeScript's declared parameters, locals and fields (a field only on `this`), and locals
    // bound to `new` or a chain.
    has(
        "src/b.ts",
        "export class S {\n  private repo: Repository<User>;\n  constructor(protected ds: DataSource) {}\n  find(qb: SelectQueryBuilder<User>, n?: Options) {\n    qb.where(a);\n    n.merge();\n    this.repo.save(u);\n    repo.save(u);\n    const q2 = this.repo.createQueryBuilder(\"u\");\n    q2.getMany();\n    const b = new Builder();\n    b.build();\n    const c: Client = make();\n    c.send();\n  }\n  other() {\n    qb.where(b);\n    this.ds.createQueryBuilder().from(t);\n  }\n}\n",
        &[
            ("where", "SelectQueryBuilder"),
            ("merge", "Options"),
            ("save", "Repository"),
            ("save", "repo"),
            ("getMany", "Repository.createQueryBuilder()"),
            ("build", "Builder"),
            ("send", "Client"),
            // A parameter is in scope in its own method only; a parameter property in its class.
            ("where", "qb"),
            ("from", "DataSource.createQueryBuilder()"),
        ],
    );
    has(
        "main.go",
        "package main\n\nfunc main() {\n\tchi.NewRouter().Route(\"/\", nil).Use(m)\n\tr, err := chi.NewRouter()\n\tr.Get(p)\n\tnew(Route).Host(h).Path(p)\n\tnew(mux.Route).Host(h)\n}\n",
        &[
            ("Use", "chi.NewRouter().Route()"),
            ("Get", "chi.NewRouter()"),
            // The builtin `new(T)` gives a `*T`.
            ("Host", "Route"),
            ("Path", "Route.Host()"),
            ("Host", "mux.Route"),
        ],
    );
    has(
        "a.py",
        "def f():\n    Client(url).session().get(u)\n    c = Client(url)\n    c.close()\n    c = c.session()\n    c.get(u)\n\ndef g():\n    c.get(u)\n",
        &[
            ("get", "Client().session()"),
            ("close", "Client()"),
            // `c = c.session()`: the `c` in the value is the one before.
            ("session", "Client()"),
            ("get", "Client().session()"),
            // Another function's `c` is not this one.
            ("get", "c"),
        ],
    );
    // Python's annotations type parameters and variables; `super()` is the bases.
    has(
        "b.py",
        "class A(Base):\n    def __init__(self, request: Request, t: Optional[Transport] = None, u: \"httpx.URL | None\" = None):\n        super().__init__()\n        request.read()\n        t.close()\n        u.copy_with()\n        r: Response = make()\n        r.aclose()\n        items: list[Request] = []\n        items.clear()\n",
        &[
            ("__init__", "super"),
            ("read", "Request"),
            ("close", "Transport"),
            ("copy_with", "URL"),
            ("aclose", "Response"),
            ("clear", "items"),
        ],
    );
    // Python's attributes: `self.x` in every method is what `__init__` assigned it.
    has(
        "c.py",
        "class C:\n    def __init__(self, transport: Transport, url):\n        self._transport = transport\n        self.client = Client(url)\n        self.path: Path = make()\n        self.url = url\n\n    def run(self, transport):\n        self._transport.close()\n        self.client.get()\n        self.path.exists()\n        self.url.copy_with()\n        transport.close()\n\n\nclass D:\n    def run(self):\n        self._transport.close()\n",
        &[
            ("close", "Transport"),
            ("get", "Client()"),
            ("exists", "Path"),
            ("copy_with", "url"),
            // A parameter of the same name is no attribute; another class's `self` neither.
            ("close", "transport"),
            ("close", "self._transport"),
        ],
    );
    has(
        "src/B.java",
        "class B {\n  void f() {\n    new GsonBuilder().setLenient().create().toJson(x);\n    var b = new GsonBuilder();\n    b.create();\n    var g = b.setLenient().create();\n    g.toJson(y);\n  }\n}\n",
        &[
            ("toJson", "GsonBuilder.setLenient().create()"),
            // Java's `var`: what the value is.
            ("create", "GsonBuilder"),
            ("toJson", "GsonBuilder.setLenient().create()"),
        ],
    );
    // C#'s too.
    has(
        "src/C.cs",
        "class C {\n  void F() {\n    var b = new Builder();\n    b.Build();\n    var q = b.Query().Where(x);\n    q.ToList();\n  }\n}\n",
        &[
            ("Build", "Builder"),
            ("Where", "Builder.Query()"),
            ("ToList", "Builder.Query().Where()"),
        ],
    );
}

#[test]
fn declarations_without_a_body_keep_what_follows_their_parameters() {
    let x = run(
        "src/ds.ts",
        "export class DataSource {\n  createQueryBuilder<E>(\n    entity: Target<E>,\n    alias: string,\n  ): SelectQueryBuilder<E>\n  createQueryBuilder(runner?: Runner): SelectQueryBuilder<any>\n  createQueryBuilder(a?: any, b?: string): SelectQueryBuilder<any> {\n    return make(a, b)\n  }\n}\n",
    );
    let signatures: Vec<&str> = x
        .definitions
        .iter()
        .filter(|d| d.name == "createQueryBuilder")
        .map(|d| d.signature.as_str())
        .collect();
    assert_eq!(
        signatures,
        [
            "createQueryBuilder<E>( entity: Target<E>, alias: string, ): SelectQueryBuilder<E>",
            "createQueryBuilder(runner?: Runner): SelectQueryBuilder<any>",
            "createQueryBuilder(a?: any, b?: string): SelectQueryBuilder<any>",
        ]
    );
    // A Rust macro's head is its first line, as before.
    let x = run("src/m.rs", "macro_rules! again {\n    () => {};\n}\n");
    assert_eq!(x.definitions[0].signature, "macro_rules! again");
}

#[test]
fn rust_code_nested_twenty_thousand_deep_is_read_without_overflowing() {
    let depth = 20_000;
    let source = format!(
        "fn f(a: &A) {{ for {}x{} in y {{ x.len(); }} let v = {}a.b(){}; match v {{ Self::K {{ k }} => k.m(), }} }}\n",
        "(".repeat(depth),
        ",)".repeat(depth),
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let x = run("src/deep.rs", &source);
    let c = calls(&x);
    assert!(c.iter().any(|(n, ..)| n == "len"), "{c:?}");
    assert!(c.iter().any(|(n, ..)| n == "b"), "{c:?}");

    // Receivers read through indexes and `if`s, as deep.
    let source = format!(
        "fn f(a: &A) {{ a{}.len(); let w = {}a.c(){}; w.d(); }}\n",
        "[0]".repeat(depth),
        "if x { ".repeat(depth),
        " } else { b }".repeat(depth)
    );
    let x = run("src/deep.rs", &source);
    let c = calls(&x);
    assert!(c.iter().any(|(n, ..)| n == "len"), "{c:?}");
    assert!(c.iter().any(|(n, ..)| n == "d"), "{c:?}");

    // And in a macro's tokens, a chain of as many calls and indexes: each call reads back a
    // bounded part of it.
    let source = format!(
        "fn f() {{ assert!(a{}{}.len()); }}\n",
        ".b()".repeat(depth),
        "[0]".repeat(depth)
    );
    let x = run("src/deep.rs", &source);
    assert_eq!(x.references.len(), depth + 2, "every call is kept");
    assert_eq!(qualifiers(&x, "len"), [extract::UNNAMED_RECEIVER]);
}

#[test]
fn receivers_written_over_several_lines_are_read_as_on_one() {
    let x = run(
        "src/justfile.rs",
        r#"impl<'src> Justfile<'src> {
  pub(crate) fn suggest(&self) {
    self
        .recipes
        .values()
        .filter(|recipe| recipe.is_public())
        .map(|recipe| recipe.name());
    self.settings
      .shell_command(config)
      .status();
    self // the tables
        .aliases
        .keys();
  }
}
"#,
    );
    let on = |name: &str| qualifiers(&x, name);
    assert_eq!(on("values"), ["Justfile.recipes"]);
    assert_eq!(on("filter"), ["Justfile.recipes.values()"]);
    assert_eq!(on("is_public"), ["Justfile.recipes.values().[]"]);
    assert_eq!(on("name"), ["Justfile.recipes.values().filter().[]"]);
    assert_eq!(on("status"), ["Justfile.settings.shell_command()"]);
    // A comment inside is read past: the parser sets it aside.
    assert_eq!(on("keys"), ["Justfile.aliases"]);

    let x = run(
        "src/client.ts",
        "class Api {\n  load(url: string) {\n    return this\n      .client\n      .get(url)\n      .then(parse);\n  }\n}\n",
    );
    let c = calls(&x);
    assert!(
        c.iter()
            .any(|(n, q, _)| n == "get" && q.as_deref() == Some("this.client")),
        "{c:?}"
    );
    assert!(
        c.iter()
            .any(|(n, q, _)| n == "then" && q.as_deref() == Some("this.client.get()")),
        "{c:?}"
    );
}

#[test]
fn rust_indexes_struct_literals_fields_of_values_and_turbofishes_are_receivers() {
    let x = run(
        "src/parser.rs",
        r#"impl<'src> Parser<'src> {
  fn f(&self, recipe: &Recipe, arguments: &mut Vec<Group>) {
    if !recipe.parameters[index].kind.is_variadic() {}
    invocations[0].recipe.recipe_path();
    self.assignments[name].name.error();
    RecipeSignature { name, recipe }.color_display(Color::never());
    let group = &mut arguments[index];
    group.push(argument);
    let mut functions = Table::<'src, FunctionDefinition>::default();
    functions.insert(definition);
    Foo::new().bar.baz();
    Vec::<Vec<u8>>::with_capacity(8).len();
  }
}
"#,
    );
    let on = |name: &str| qualifiers(&x, name);
    assert_eq!(on("is_variadic"), ["Recipe.parameters.[].kind"]);
    assert_eq!(on("recipe_path"), ["invocations.[].recipe"]);
    assert_eq!(on("error"), ["Parser.assignments.[].name"]);
    assert_eq!(on("color_display"), ["RecipeSignature"]);
    assert_eq!(on("push"), ["Group"]);
    assert_eq!(on("default"), ["Table"]);
    assert_eq!(on("insert"), ["Table::default()"]);
    assert_eq!(on("baz"), ["Foo::new().bar"]);
    assert_eq!(on("with_capacity"), ["Vec"]);
    assert_eq!(on("len"), ["Vec::with_capacity()"]);
}

#[test]
fn rust_ifs_and_matches_give_what_their_branches_give() {
    let x = run(
        "src/recipe.rs",
        r#"impl Recipe {
  fn run(&self, config: &Config, context: &Context, state: State, x: Option<Token>) {
    let color = if config.highlight {
      config.color.command(config.command_color)
    } else {
      config.color
    }
    .stderr();
    color.paint(command);
    let parent = if self.assignments.is_some() {
      &self.scope
    } else {
      context.scope
    };
    parent.child();
    let token = match state {
      State::A(t) => t,
      State::B => self.token(),
      _ => return,
    };
    token.lexeme();
    let name = if let Some(n) = x { n } else { Name::default() };
    name.len();
    let found = if let Some(a) = self.find() { Some((key, a)) } else { self.guess() };
    found.show();
    if let Some((_key, found)) = found {
        found.hide();
    }
  }
}
"#,
    );
    let on = |name: &str| qualifiers(&x, name);
    // The first branch that is a chain or a field, not a name a pattern bound.
    assert_eq!(on("stderr"), ["Config.color.command()"]);
    assert_eq!(on("paint"), ["Config.color.command().stderr()"]);
    assert_eq!(on("child"), ["Recipe.scope"]);
    assert_eq!(on("lexeme"), ["Recipe.token()"]);
    assert_eq!(on("len"), ["Name::default()"]);
    assert_eq!(on("show"), ["Recipe.guess()"]);
    // A tuple's name inside `Some(..)` hides the outer one it shadows.
    assert_eq!(on("hide"), ["found"]);
}
