use super::*;
use crate::chunk::{self, CodeLanguage, Language};
use std::time::Duration;

fn run(path: &str, text: &str) -> Extraction {
    let Language::Code(lang) = Language::from_path(path) else {
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
    let push = &x.definitions[1];
    assert_eq!(push.signature, "pub fn push(&mut self, x: T)");
    assert_eq!((push.start_line, push.end_line), (9, 14));
    let c = calls(&x);
    let push = Some("Stack::push".to_owned());
    assert!(c.contains(&("push".into(), Some("self.items".into()), push.clone())));
    assert!(c.contains(&("grow".into(), Some("Stack".into()), push.clone())));
    assert!(c.contains(&("helper".into(), None, push.clone())));
    assert!(c.contains(&("write".into(), None, Some("Stack::fmt".into()))));
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
    def post(self):
        self.check()
        user = models.find(osp.join("a"))
        return render(user)

    def check(self):
        pass

@app.route("/")
def login():
    return Login().post()
"#,
    );
    assert_eq!(
        defs(&x),
        [
            ("Login".to_owned(), "class"),
            ("Login.post".to_owned(), "method"),
            ("Login.check".to_owned(), "method"),
            ("login".to_owned(), "function"),
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
        ]
    );
    let c = calls(&x);
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
    assert!(find("express").candidates.is_empty());
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
            ("App.listen".to_owned(), "function"),
            ("create".to_owned(), "function"),
        ]
    );
    let find = |name: &str| x.imports.iter().find(|i| i.name == name).expect(name);
    assert_eq!(find("Router").candidates[0], "/lib/router.ts");
    assert!(find("util").candidates.is_empty());
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

func New() *Server { return &Server{} }
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
        ]
    );
    let c = calls(&x);
    let start = Some("Server.Start".to_owned());
    assert!(c.contains(&("listen".into(), Some("s".into()), start.clone())));
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
