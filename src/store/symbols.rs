//! Code intelligence rows: each file's definitions, call sites and imports (written with the
//! file), and the lookups that resolution ([`crate::intel::graph`]) is built from.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row, Transaction};

use super::{Scope, Store, StoreError, q};
use crate::intel::Extraction;
use crate::lock;

/// A definition as stored, with its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionRow {
    pub repository: String,
    pub file_id: i64,
    pub file_path: String,
    pub language: Option<String>,
    pub ordinal: i32,
    pub name: String,
    pub qualified: String,
    pub kind: String,
    pub signature: String,
    pub start_line: i32,
    pub end_line: i32,
    pub parent: Option<i32>,
    /// The trait a Rust method's `impl Trait for Type` implements; `None` for an inherent
    /// method and every other definition.
    pub implements: Option<String>,
}

/// A call site as stored, with its file and the definition it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceRow {
    pub repository: String,
    pub file_id: i64,
    pub file_path: String,
    pub name: String,
    pub qualifier: Option<String>,
    pub line: i32,
    /// The enclosing definition's ordinal, qualified name and kind; `None` at the top level.
    pub enclosing: Option<i32>,
    pub enclosing_qualified: Option<String>,
    /// How many arguments the call passes, where it was counted (`crate::intel::Reference`).
    pub args: Option<i16>,
    /// The type its first argument is written as, where known (`crate::intel::Reference`).
    pub argument: Option<String>,
}

/// An import as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRow {
    pub repository: String,
    pub file_id: i64,
    pub file_path: String,
    pub specifier: String,
    pub name: String,
    pub line: i32,
    pub candidates: Vec<String>,
}

/// A type's member as stored ([`crate::intel::Member`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRow {
    pub repository: String,
    pub file_id: i64,
    pub file_path: String,
    pub owner: String,
    /// `field`, `trait`, `deref` or `alias` ([`crate::intel::MemberKind::as_str`]).
    pub kind: String,
    pub name: String,
    pub ty: String,
}

/// How many members of one type name [`Store::members_of`] reads: a name defined by many
/// types across a workspace (`Config`, `Inner`) is read only so far.
const MEMBERS_PER_OWNER: i64 = 256;

/// [`Store::bare_importer_dirs`]' answers, by repository, with the scope fingerprint of each.
pub(super) type ImporterDirs = Arc<Mutex<HashMap<String, (u64, Arc<Vec<String>>)>>>;

/// The columns [`import`] reads, from `code_imports i` and its file `f`.
const IMPORT_COLUMNS: &str =
    "i.repository, i.file_id, f.file_path, i.specifier, i.name, i.line, i.candidates";

/// How a name is matched in [`Store::find_definitions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameMatch {
    /// The name exactly (case-sensitive).
    Exact,
    /// Names starting with it, ignoring case.
    Prefix,
}

/// Which calls of some names a callers question reads ([`Store::references_narrowed`]).
/// A name with more definitions than a lookup reads (`new`, `len`) is not resolved by the name
/// alone, so its calls can reach a definition only from the definition's own repository or
/// through a qualifier naming its owner (`Stack::new`): the other calls need not be read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Narrowing<'a> {
    /// The names (as called: `name`, `name!`) whose calls are narrowed.
    pub names: &'a [String],
    pub repositories: &'a [String],
    /// Owners (`Stack`) a kept call's qualifier may end with.
    pub owners: &'a [String],
    /// Those of `names` whose calls in `repositories` are not read when their qualifier ends
    /// with a type (a name starting with a capital letter, `A-Z`; not a chain's last call,
    /// `NewRouter()`) other than one of `owners`: the resolver finds only that type's methods
    /// for such a call, in languages without base classes.
    pub typed: &'a [String],
}

/// The last part of a call's qualifier (after the last `.` or `:`), as the resolver compares
/// it with owners; the expression of an index of migration 0014.
const QUALIFIER_LAST: &str = "substring(r.qualifier from '[^.:]*$')";

/// A definition's owner, the segment before the last of its qualified name (`Stack` of
/// `Stack::new`, `a.Stack.push`, Ruby's `Stack#push`), split as the resolver's `segments`
/// splits; NULL at the top level. The expression of an index of migration 0016.
const DEFINITION_OWNER: &str = r"substring(d.qualified from '([^.:/\\#]*)[.:/\\#]+[^.:/\\#]*$')";

/// Everything [`Store::find_definitions`] filters on.
#[derive(Debug, Clone)]
pub struct DefinitionLookup<'a> {
    pub scope: &'a Scope,
    pub repository: Option<&'a str>,
    pub names: &'a [String],
    pub matching: NameMatch,
    pub kinds: &'a [String],
    /// Languages as stored (empty: any).
    pub languages: &'a [String],
    pub limit: i64,
    pub offset: i64,
    /// A text the definition's qualified name or its file's path must contain: the owner of a
    /// qualified lookup (`Stack` of `Stack::new`), so that the limit applies to the
    /// definitions that may be it, not to every `new` of the workspace.
    pub within: Option<&'a str>,
}

impl<'a> DefinitionLookup<'a> {
    /// Definitions named exactly one of `names`, of any kind and language, first page.
    pub fn named(
        scope: &'a Scope,
        repository: Option<&'a str>,
        names: &'a [String],
        limit: i64,
    ) -> Self {
        DefinitionLookup {
            scope,
            repository,
            names,
            matching: NameMatch::Exact,
            kinds: &[],
            languages: &[],
            limit,
            offset: 0,
            within: None,
        }
    }
}

/// The tables of a file's code intelligence rows, all keyed by `file_id`.
pub(super) const INTEL_TABLES: [&str; 4] = [
    "code_definitions",
    "code_references",
    "code_imports",
    "code_members",
];

/// Replaces one file's rows (inside the file's transaction).
pub(super) async fn replace_intel(
    tx: &mut Transaction<'_, Postgres>,
    file_id: i64,
    repository: &str,
    intel: &Extraction,
) -> Result<(), StoreError> {
    for table in INTEL_TABLES {
        sqlx::query(&format!("DELETE FROM {table} WHERE file_id = $1"))
            .bind(file_id)
            .execute(&mut **tx)
            .await
            .map_err(q("deleting a file's definitions, calls and imports"))?;
    }
    let defs = &intel.definitions;
    if !defs.is_empty() {
        sqlx::query(
            "INSERT INTO code_definitions (file_id, ordinal, repository, name, qualified, kind,
               signature, start_line, end_line, parent, implements)
             SELECT $1, d.ordinal - 1, $2, d.name, d.qualified, d.kind, d.signature,
               d.start_line, d.end_line, d.parent, d.implements
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int4[],
                         $8::int4[], $9::int4[], $10::text[]) WITH ORDINALITY
               AS d(name, qualified, kind, signature, start_line, end_line, parent, implements,
                    ordinal)",
        )
        .bind(file_id)
        .bind(repository)
        .bind(defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>())
        .bind(
            defs.iter()
                .map(|d| d.qualified.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(defs.iter().map(|d| d.kind).collect::<Vec<_>>())
        .bind(
            defs.iter()
                .map(|d| d.signature.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(defs.iter().map(|d| d.start_line as i32).collect::<Vec<_>>())
        .bind(defs.iter().map(|d| d.end_line as i32).collect::<Vec<_>>())
        .bind(
            defs.iter()
                .map(|d| d.parent.map(|p| p as i32))
                .collect::<Vec<_>>(),
        )
        .bind(
            defs.iter()
                .map(|d| d.implements.as_deref())
                .collect::<Vec<_>>(),
        )
        .execute(&mut **tx)
        .await
        .map_err(q("recording a file's definitions"))?;
    }
    let refs = &intel.references;
    if !refs.is_empty() {
        sqlx::query(
            "INSERT INTO code_references (file_id, repository, name, qualifier, line, enclosing,
               args, argument)
             SELECT $1, $2, r.name, r.qualifier, r.line, r.enclosing, r.args, r.argument
             FROM unnest($3::text[], $4::text[], $5::int4[], $6::int4[], $7::int2[], $8::text[])
               AS r(name, qualifier, line, enclosing, args, argument)",
        )
        .bind(file_id)
        .bind(repository)
        .bind(refs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>())
        .bind(
            refs.iter()
                .map(|r| r.qualifier.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(refs.iter().map(|r| r.line as i32).collect::<Vec<_>>())
        .bind(
            refs.iter()
                .map(|r| r.enclosing.map(|e| e as i32))
                .collect::<Vec<_>>(),
        )
        .bind(
            refs.iter()
                .map(|r| r.args.map(|a| a.min(i16::MAX as u16) as i16))
                .collect::<Vec<_>>(),
        )
        .bind(
            refs.iter()
                .map(|r| r.argument.as_deref())
                .collect::<Vec<_>>(),
        )
        .execute(&mut **tx)
        .await
        .map_err(q("recording a file's calls"))?;
    }
    let imports = &intel.imports;
    if !imports.is_empty() {
        // Each import's candidates travel as one string (`unit_joined`).
        sqlx::query(
            "INSERT INTO code_imports (file_id, repository, specifier, name, line, candidates)
             SELECT $1, $2, i.specifier, i.name, i.line,
               string_to_array(i.candidates, chr(31))
             FROM unnest($3::text[], $4::text[], $5::int4[], $6::text[])
               AS i(specifier, name, line, candidates)",
        )
        .bind(file_id)
        .bind(repository)
        .bind(
            imports
                .iter()
                .map(|i| i.specifier.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(imports.iter().map(|i| i.name.as_str()).collect::<Vec<_>>())
        .bind(imports.iter().map(|i| i.line as i32).collect::<Vec<_>>())
        .bind(
            imports
                .iter()
                .map(|i| super::unit_joined(&i.candidates))
                .collect::<Vec<_>>(),
        )
        .execute(&mut **tx)
        .await
        .map_err(q("recording a file's imports"))?;
    }
    let members = &intel.members;
    if !members.is_empty() {
        sqlx::query(
            "INSERT INTO code_members (file_id, repository, owner, kind, name, type)
             SELECT $1, $2, m.owner, m.kind, m.name, m.type
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[])
               AS m(owner, kind, name, type)",
        )
        .bind(file_id)
        .bind(repository)
        .bind(members.iter().map(|m| m.owner.as_str()).collect::<Vec<_>>())
        .bind(members.iter().map(|m| m.kind.as_str()).collect::<Vec<_>>())
        .bind(members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>())
        .bind(members.iter().map(|m| m.ty.as_str()).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await
        .map_err(q("recording a file's members"))?;
    }
    Ok(())
}

/// Deletes the rows of vanished files (inside the deletion's transaction).
pub(super) async fn delete_intel(
    tx: &mut Transaction<'_, Postgres>,
    repository: &str,
    paths: &[String],
) -> Result<(), StoreError> {
    for table in INTEL_TABLES {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE file_id IN
               (SELECT id FROM indexed_files WHERE repository = $1 AND file_path = ANY($2))"
        ))
        .bind(repository)
        .bind(paths)
        .execute(&mut **tx)
        .await
        .map_err(q("deleting vanished files' definitions"))?;
    }
    Ok(())
}

/// The file `f` of each row of `alias`, looked up row by row. A plain join is planned from
/// estimates, and for a few thousand rows the planner hashed every file instead (27 of 38 ms
/// of a callers lookup at 1M chunks); `OFFSET 0` keeps the subquery from being flattened into
/// one.
fn file_per_row(alias: &str) -> String {
    format!(
        "CROSS JOIN LATERAL (SELECT f.file_path, f.language FROM indexed_files f
           WHERE f.id = {alias}.file_id OFFSET 0) f"
    )
}

const DEFINITION_COLUMNS: &str = "d.repository, d.file_id, f.file_path, f.language, d.ordinal,
    d.name, d.qualified, d.kind, d.signature, d.start_line, d.end_line, d.parent,
    d.implements";

fn definition(r: &PgRow) -> DefinitionRow {
    DefinitionRow {
        repository: r.get("repository"),
        file_id: r.get("file_id"),
        file_path: r.get("file_path"),
        language: r.get("language"),
        ordinal: r.get("ordinal"),
        name: r.get("name"),
        qualified: r.get("qualified"),
        kind: r.get("kind"),
        signature: r.get("signature"),
        start_line: r.get("start_line"),
        end_line: r.get("end_line"),
        parent: r.get("parent"),
        implements: r.get("implements"),
    }
}

const REFERENCE_COLUMNS: &str = "r.repository, r.file_id, f.file_path, r.name, r.qualifier,
    r.line, r.enclosing, e.qualified AS enclosing_qualified, r.args, r.argument";

fn reference(r: &PgRow) -> ReferenceRow {
    ReferenceRow {
        repository: r.get("repository"),
        file_id: r.get("file_id"),
        file_path: r.get("file_path"),
        name: r.get("name"),
        qualifier: r.get("qualifier"),
        line: r.get("line"),
        enclosing: r.get("enclosing"),
        enclosing_qualified: r.get("enclosing_qualified"),
        args: r.get("args"),
        argument: r.get("argument"),
    }
}

fn member(r: &PgRow) -> MemberRow {
    MemberRow {
        repository: r.get("repository"),
        file_id: r.get("file_id"),
        file_path: r.get("file_path"),
        owner: r.get("owner"),
        kind: r.get("kind"),
        name: r.get("name"),
        ty: r.get("type"),
    }
}

fn import(r: &PgRow) -> ImportRow {
    ImportRow {
        repository: r.get("repository"),
        file_id: r.get("file_id"),
        file_path: r.get("file_path"),
        specifier: r.get("specifier"),
        name: r.get("name"),
        line: r.get("line"),
        candidates: r.get("candidates"),
    }
}

/// The repositories a lookup may read: the one named (if in scope) or the scope's.
fn repositories(scope: &Scope, repository: Option<&str>) -> Vec<String> {
    match repository {
        Some(r) if scope.contains(r) => vec![r.to_owned()],
        Some(_) => Vec::new(),
        None => scope.repositories().to_vec(),
    }
}

/// [`repositories`], or `None` when the lookup may read the whole database (no repository
/// named, the scope is all of it): compared with a parameter (not hashed), 2,000 names cost
/// 5 µs a row at 1M chunks.
fn restriction(scope: &Scope, repository: Option<&str>) -> Option<Vec<String>> {
    (repository.is_some() || !scope.is_whole()).then(|| repositories(scope, repository))
}

/// The predicate [`restriction`] asks for, on `alias.repository` against `$1`: the comparison,
/// or (none to make) a test of the parameter, true, which keeps it typed. A separate text for
/// each, not `$1 IS NULL OR …`: a generic plan of the OR cannot use the repository as an index
/// condition, and an ordered read of a name's definitions became a sort of all of them.
fn restriction_sql(restricted: bool, alias: &str) -> String {
    if restricted {
        format!("{alias}.repository = ANY($1)")
    } else {
        "$1::text[] IS NULL".to_owned()
    }
}

impl Store {
    /// Definitions whose name matches, ordered by name, repository, path and line.
    pub async fn find_definitions(
        &self,
        l: &DefinitionLookup<'_>,
    ) -> Result<Vec<DefinitionRow>, StoreError> {
        let repos = restriction(l.scope, l.repository);
        let name_predicate = match l.matching {
            NameMatch::Exact => "d.name = ANY($2)",
            // `lower(name) LIKE 'abc%'` would not use the index with a parameter; a range does.
            NameMatch::Prefix => {
                "lower(d.name) ~>=~ lower($2[1]) AND lower(d.name) ~<~ (lower($2[1]) || chr(1114111))"
            }
        };
        // With an owner to look within, the definitions it owns (migration 0016's index) and
        // the top-level ones (no owner) in a file whose path holds it: `qualifies` (src/intel/
        // graph.rs) keeps those whose module path and qualified name end as asked.
        let definitions = if l.within.is_some() {
            format!(
                "(SELECT * FROM code_definitions d WHERE {name_predicate} AND {DEFINITION_OWNER} = $7
                  UNION ALL
                  SELECT * FROM code_definitions d WHERE {name_predicate} AND {DEFINITION_OWNER} IS NULL)"
            )
        } else {
            "code_definitions".to_owned()
        };
        let rows = sqlx::query(&format!(
            "SELECT {DEFINITION_COLUMNS}
             FROM {definitions} d JOIN indexed_files f ON f.id = d.file_id
             WHERE {} AND {name_predicate}
               AND (cardinality($3::text[]) = 0 OR d.kind = ANY($3))
               AND (cardinality($4::text[]) = 0 OR f.language = ANY($4))
               AND ($7::text IS NULL
                    OR strpos(d.qualified, $7) > 0 OR strpos(f.file_path, $7) > 0)
             ORDER BY d.name, d.repository, f.file_path, d.start_line
             LIMIT $5 OFFSET $6",
            restriction_sql(repos.is_some(), "d")
        ))
        .bind(&repos)
        .bind(l.names)
        .bind(l.kinds)
        .bind(l.languages)
        .bind(l.limit)
        .bind(l.offset)
        .bind(l.within)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up definitions"))?;
        Ok(rows.iter().map(definition).collect())
    }

    /// Up to `per_name` definitions of each of `names` (exactly, any kind), each name's in
    /// repository, path and line order. One limit over all the names, in name order, let the
    /// first crowded name take every row (`clone` before `len`, `new` and `shape`).
    pub async fn definitions_named(
        &self,
        scope: &Scope,
        names: &[String],
        per_name: i64,
    ) -> Result<Vec<DefinitionRow>, StoreError> {
        let repos = restriction(scope, None);
        let rows = sqlx::query(&format!(
            "SELECT d.* FROM unnest($2::text[]) AS n(name) CROSS JOIN LATERAL (
               SELECT {DEFINITION_COLUMNS}
               FROM code_definitions d JOIN indexed_files f ON f.id = d.file_id
               WHERE d.name = n.name AND {}
               ORDER BY d.repository, f.file_path, d.start_line
               LIMIT $3) d",
            restriction_sql(repos.is_some(), "d")
        ))
        .bind(&repos)
        .bind(names)
        .bind(per_name)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up definitions"))?;
        Ok(rows.iter().map(definition).collect())
    }

    /// The members of the types named `owners` ([`MemberRow`]), by repository, file and the
    /// path, kind, name and type, at most [`MEMBERS_PER_OWNER`] per name.
    pub async fn members_of(
        &self,
        scope: &Scope,
        owners: &[String],
    ) -> Result<Vec<MemberRow>, StoreError> {
        self.members_where(scope, owners, "m.owner = o.key").await
    }

    /// The members of enum variants named `variants` (`Redefinition` of `Kind::Redefinition`),
    /// whatever their enum, as [`Store::members_of`] reads a type's.
    pub async fn variant_members_of(
        &self,
        scope: &Scope,
        variants: &[String],
    ) -> Result<Vec<MemberRow>, StoreError> {
        // The predicate of migration 0024's partial index, for the index to answer.
        let variant = "split_part(m.owner, '::', 2) = o.key AND position('::' in m.owner) > 0";
        self.members_where(scope, variants, variant).await
    }

    /// The members that `matches` (a condition on `m`, the member, and `o.key`, one of `keys`)
    /// selects, at most [`MEMBERS_PER_OWNER`] per key.
    async fn members_where(
        &self,
        scope: &Scope,
        keys: &[String],
        matches: &str,
    ) -> Result<Vec<MemberRow>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let repos = restriction(scope, None);
        let rows = sqlx::query(&format!(
            "SELECT m.* FROM unnest($2::text[]) AS o(key) CROSS JOIN LATERAL (
               SELECT m.repository, m.file_id, f.file_path, m.owner, m.kind, m.name, m.type
               FROM code_members m JOIN indexed_files f ON f.id = m.file_id
               WHERE {matches} AND {}
               ORDER BY m.repository, f.file_path, m.owner, m.kind, m.name, m.type
               LIMIT $3) m",
            restriction_sql(repos.is_some(), "m")
        ))
        .bind(&repos)
        .bind(keys)
        .bind(MEMBERS_PER_OWNER)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up types' members"))?;
        Ok(rows.iter().map(member).collect())
    }

    /// One definition by its file and ordinal (a graph node's parent, a call's enclosing
    /// definition), for several at once.
    pub async fn definitions_at(
        &self,
        keys: &[(i64, i32)],
    ) -> Result<Vec<DefinitionRow>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&format!(
            "SELECT {DEFINITION_COLUMNS}
             FROM unnest($1::int8[], $2::int4[]) AS k(file_id, ordinal)
             JOIN code_definitions d ON d.file_id = k.file_id AND d.ordinal = k.ordinal
             {}",
            file_per_row("d")
        ))
        .bind(keys.iter().map(|k| k.0).collect::<Vec<_>>())
        .bind(keys.iter().map(|k| k.1).collect::<Vec<_>>())
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading definitions"))?;
        Ok(rows.iter().map(definition).collect())
    }

    /// The definitions in the given files (to resolve calls made from them).
    pub async fn definitions_in_files(
        &self,
        file_ids: &[i64],
        names: &[String],
    ) -> Result<Vec<DefinitionRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {DEFINITION_COLUMNS}
             FROM code_definitions d JOIN indexed_files f ON f.id = d.file_id
             WHERE d.file_id = ANY($1) AND d.name = ANY($2)"
        ))
        .bind(file_ids)
        .bind(names)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading definitions"))?;
        Ok(rows.iter().map(definition).collect())
    }

    /// The first `limit` call sites of the given names in the scope, in repository, path and
    /// line order. Each name's are read in index order (by repository), so `new`'s 165,000
    /// calls at 1M chunks cost what its first few repositories' do.
    pub async fn references_named(
        &self,
        scope: &Scope,
        repository: Option<&str>,
        names: &[String],
        limit: i64,
    ) -> Result<Vec<ReferenceRow>, StoreError> {
        let repos = restriction(scope, repository);
        let rows = sqlx::query(&format!(
            "SELECT r.repository, r.file_id, r.file_path, r.name, r.qualifier, r.line,
                    r.enclosing, e.qualified AS enclosing_qualified, r.args, r.argument
             FROM unnest($2::text[]) AS n(name) CROSS JOIN LATERAL (
               SELECT r.repository, r.file_id, f.file_path, r.name, r.qualifier, r.line,
                      r.enclosing, r.args, r.argument
               FROM code_references r JOIN indexed_files f ON f.id = r.file_id
               WHERE r.name = n.name AND {}
               ORDER BY r.repository, f.file_path, r.line
               LIMIT $3) r
             LEFT JOIN code_definitions e ON e.file_id = r.file_id AND e.ordinal = r.enclosing
             ORDER BY r.repository, r.file_path, r.line
             LIMIT $3",
            restriction_sql(repos.is_some(), "r")
        ))
        .bind(&repos)
        .bind(names)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up references"))?;
        Ok(rows.iter().map(reference).collect())
    }

    /// Every call site of `names` in the scope (the first `limit`, in repository, path and line
    /// order), but those of `narrowing.names` only in its repositories or on a qualifier whose
    /// last part is one of its owners.
    pub async fn references_narrowed(
        &self,
        scope: &Scope,
        repository: Option<&str>,
        names: &[String],
        narrowing: &Narrowing<'_>,
        limit: i64,
    ) -> Result<Vec<ReferenceRow>, StoreError> {
        let repos = restriction(scope, repository);
        // Each kind of call is its own branch, its predicate an index condition that no outer
        // predicate is pushed into (`OFFSET 0`): planned generically, one OR of them read all
        // 190,000 calls of `new` through the name index to keep those naming the owner. The
        // calls of narrowed names are those in the targets' repositories, then those elsewhere
        // on a qualifier naming an owner. The file and the enclosing definition are looked up
        // per call (`file_per_row`).
        let plain: Vec<&String> = names
            .iter()
            .filter(|n| !narrowing.names.contains(n))
            .collect();
        let rows = sqlx::query(&format!(
            "SELECT r.repository, r.file_id, f.file_path, r.name, r.qualifier, r.line, r.enclosing,
               (SELECT e.qualified FROM code_definitions e
                WHERE e.file_id = r.file_id AND e.ordinal = r.enclosing) AS enclosing_qualified,
               r.args, r.argument
             FROM ((SELECT * FROM code_references r WHERE r.name = ANY($2) OFFSET 0)
                   UNION ALL
                   (SELECT * FROM code_references r
                    WHERE r.name = ANY($4) AND r.repository = ANY($5)
                      AND NOT coalesce(r.name = ANY($7)
                                       AND {QUALIFIER_LAST} ~ '^[A-Z][A-Za-z0-9_]*$'
                                       AND {QUALIFIER_LAST} <> ALL($6), false)
                    OFFSET 0)
                   UNION ALL
                   (SELECT * FROM code_references r
                    WHERE r.name = ANY($4) AND {QUALIFIER_LAST} = ANY($6)
                      AND NOT r.repository = ANY($5) OFFSET 0)) r
             {}
             WHERE {}
             ORDER BY r.repository, f.file_path, r.line
             LIMIT $3",
            file_per_row("r"),
            restriction_sql(repos.is_some(), "r")
        ))
        .bind(&repos)
        .bind(&plain)
        .bind(limit)
        .bind(narrowing.names)
        .bind(narrowing.repositories)
        .bind(narrowing.owners)
        .bind(narrowing.typed)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up references"))?;
        Ok(rows.iter().map(reference).collect())
    }

    /// The calls made inside the given definitions (callees), directly (not in nested ones).
    pub async fn references_in(
        &self,
        keys: &[(i64, i32)],
    ) -> Result<Vec<ReferenceRow>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&format!(
            "SELECT {REFERENCE_COLUMNS}
             FROM unnest($1::int8[], $2::int4[]) AS k(file_id, ordinal)
             JOIN code_references r ON r.file_id = k.file_id AND r.enclosing = k.ordinal
             JOIN indexed_files f ON f.id = r.file_id
             LEFT JOIN code_definitions e ON e.file_id = r.file_id AND e.ordinal = r.enclosing
             ORDER BY f.file_path, r.line"
        ))
        .bind(keys.iter().map(|k| k.0).collect::<Vec<_>>())
        .bind(keys.iter().map(|k| k.1).collect::<Vec<_>>())
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up calls"))?;
        Ok(rows.iter().map(reference).collect())
    }

    /// The imports of the given files; with `names`, only those binding one of them.
    pub async fn imports_of(
        &self,
        file_ids: &[i64],
        names: Option<&[String]>,
    ) -> Result<Vec<ImportRow>, StoreError> {
        // Two statements, not `$2 IS NULL OR ...`, which a generic plan could not narrow.
        let sql = format!(
            "SELECT {IMPORT_COLUMNS} FROM code_imports i {}
             WHERE i.file_id = ANY($1) {} ORDER BY f.file_path, i.line",
            file_per_row("i"),
            if names.is_some() {
                "AND i.name = ANY($2)"
            } else {
                ""
            }
        );
        let mut query = sqlx::query(&sql).bind(file_ids);
        if let Some(names) = names {
            query = query.bind(names);
        }
        let rows = query
            .fetch_all(&self.pool)
            .await
            .map_err(q("reading imports"))?;
        Ok(rows.iter().map(import).collect())
    }

    /// The imports of the files at `paths` of `repository`.
    pub async fn imports_at(
        &self,
        repository: &str,
        paths: &[String],
    ) -> Result<Vec<ImportRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {IMPORT_COLUMNS}
             FROM code_imports i JOIN indexed_files f ON f.id = i.file_id
             WHERE f.repository = $1 AND f.file_path = ANY($2)
             ORDER BY f.file_path, i.line"
        ))
        .bind(repository)
        .bind(paths)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading imports"))?;
        Ok(rows.iter().map(import).collect())
    }

    /// The imports in `repository` that name any of `keys` among their candidates.
    pub async fn importers(
        &self,
        repository: &str,
        keys: &[String],
        limit: i64,
    ) -> Result<Vec<ImportRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {IMPORT_COLUMNS}
             FROM code_imports i JOIN indexed_files f ON f.id = i.file_id
             WHERE i.candidates && $2 AND i.repository = $1
             ORDER BY f.file_path, i.line LIMIT $3"
        ))
        .bind(repository)
        .bind(keys)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up importers"))?;
        Ok(rows.iter().map(import).collect())
    }

    /// The files of `repository` that define a name at their top level in a directory whose
    /// path ends with a given one (a Kotlin package's, [`crate::intel`]'s `package:` import
    /// candidates): (name, directory, path) for each (name, directory) of `wanted`, at most 64
    /// files each.
    pub async fn package_definers(
        &self,
        repository: &str,
        wanted: &[(String, String)],
    ) -> Result<Vec<(String, String, String)>, StoreError> {
        let (names, dirs): (Vec<&str>, Vec<&str>) =
            wanted.iter().map(|(n, d)| (n.as_str(), d.as_str())).unzip();
        let rows = sqlx::query(
            "SELECT k.name, k.dir, f.file_path
             FROM unnest($2::text[], $3::text[]) AS k(name, dir)
             JOIN LATERAL (
               SELECT DISTINCT f.file_path FROM code_definitions d
               JOIN indexed_files f ON f.id = d.file_id
               WHERE d.name = k.name AND d.repository = $1 AND d.parent IS NULL
                 AND f.error IS NULL
                 AND (regexp_replace(f.file_path, '/[^/]*$', '') = k.dir
                      OR right(regexp_replace(f.file_path, '/[^/]*$', ''), length(k.dir) + 1)
                         = '/' || k.dir)
               LIMIT 64) f ON true",
        )
        .bind(repository)
        .bind(&names)
        .bind(&dirs)
        .fetch_all(&self.pool)
        .await
        .map_err(q("resolving package imports"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("name"), r.get("dir"), r.get("file_path")))
            .collect())
    }

    /// The Swift files of each of `modules` in `repository` ([`crate::intel`]'s `swift:`
    /// import candidates): (module, path) pairs, those of the package target
    /// (`Sources/<module>/`, `Tests/<module>/`, at any depth) when it has some, else those under
    /// a directory named for the module; at most 2,000 files each.
    pub async fn swift_module_files(
        &self,
        repository: &str,
        modules: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT m.name, f.file_path, f.tier
             FROM unnest($2::text[]) AS m(name)
             JOIN LATERAL (
               SELECT f.file_path,
                      CASE WHEN f.file_path ~ ('(^|/)(Sources|Tests)/' || m.name || '/')
                           THEN 0 ELSE 1 END AS tier
               FROM indexed_files f
               WHERE f.repository = $1 AND f.error IS NULL AND f.file_path LIKE '%.swift'
                 AND f.file_path ~ ('(^|/)' || m.name || '/')
               ORDER BY tier
               LIMIT 2000) f ON true
             WHERE m.name ~ '^[A-Za-z_][A-Za-z0-9_]*$'
             ORDER BY m.name, f.tier",
        )
        .bind(repository)
        .bind(modules)
        .fetch_all(&self.pool)
        .await
        .map_err(q("resolving Swift modules"))?;
        // Each module's files of its best tier (the rows come in tier order).
        let mut best: HashMap<String, i32> = HashMap::new();
        let mut out = Vec::new();
        for r in &rows {
            let (name, tier): (String, i32) = (r.get("name"), r.get("tier"));
            if *best.entry(name.clone()).or_insert(tier) == tier {
                out.push((name, r.get("file_path")));
            }
        }
        Ok(out)
    }

    /// Which of `keys` (import candidates: `/path` or a path suffix) name indexed files of
    /// `repository`, and which files: (key, path) pairs.
    pub async fn files_for_keys(
        &self,
        repository: &str,
        keys: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let (exact, suffix): (Vec<&String>, Vec<&String>) =
            keys.iter().partition(|k| k.starts_with('/'));
        let exact_paths: Vec<String> = exact.iter().map(|k| k[1..].to_owned()).collect();
        let suffixes: Vec<String> = suffix.iter().map(|k| (*k).clone()).collect();
        // A suffix key `a/b.py` names `a/b.py` and any `…/a/b.py`: the reversed path starts
        // with the reversed key and a `/`, a range the reversed-path index answers.
        let rows = sqlx::query(
            "SELECT '/' || f.file_path AS key, f.file_path
             FROM indexed_files f
             WHERE f.repository = $1 AND f.file_path = ANY($2) AND f.error IS NULL
             UNION ALL
             SELECT k.key, f.file_path
             FROM unnest($3::text[]) AS k(key)
             JOIN LATERAL (
               SELECT file_path FROM indexed_files f
               WHERE f.repository = $1 AND f.error IS NULL
                 AND (f.file_path = k.key
                      OR (reverse(f.file_path) ~>=~ (reverse(k.key) || '/')
                          AND reverse(f.file_path) ~<~ (reverse(k.key) || '0')))
               LIMIT 16) f ON true",
        )
        .bind(repository)
        .bind(&exact_paths)
        .bind(&suffixes)
        .fetch_all(&self.pool)
        .await
        .map_err(q("resolving import candidates"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("key"), r.get("file_path")))
            .collect())
    }

    /// The paths of `repository`'s files named `name` (`Cargo.toml`), at most `limit`, from the
    /// reversed-path index.
    pub async fn files_named(
        &self,
        repository: &str,
        name: &str,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query(
            "SELECT file_path FROM indexed_files f
             WHERE f.repository = $1 AND f.error IS NULL
               AND (f.file_path = $2
                    OR (reverse(f.file_path) ~>=~ (reverse($2) || '/')
                        AND reverse(f.file_path) ~<~ (reverse($2) || '0')))
             ORDER BY file_path
             LIMIT $3",
        )
        .bind(repository)
        .bind(name)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(q("listing files by name"))?;
        Ok(rows.iter().map(|r| r.get("file_path")).collect())
    }

    /// The directories of the files of `repository` that import a bare specifier (`bare:…`
    /// first among an import's candidates): where `tsconfig.json` aliases may apply. Read again
    /// only when `scope` has changed: the statement reads every import of the repository.
    pub async fn bare_importer_dirs(
        &self,
        scope: &Scope,
        repository: &str,
    ) -> Result<Arc<Vec<String>>, StoreError> {
        let fingerprint = scope.fingerprint();
        if let Some((known, dirs)) = lock(&self.importer_dirs).get(repository)
            && *known == fingerprint
        {
            return Ok(dirs.clone());
        }
        let rows = sqlx::query(
            "SELECT DISTINCT regexp_replace(f.file_path, '/?[^/]*$', '') AS dir
             FROM code_imports i JOIN indexed_files f ON f.id = i.file_id
             WHERE i.repository = $1 AND i.candidates[1] LIKE 'bare:%'",
        )
        .bind(repository)
        .fetch_all(&self.pool)
        .await
        .map_err(q("listing the directories that import packages"))?;
        let dirs = Arc::new(rows.iter().map(|r| r.get("dir")).collect::<Vec<String>>());
        lock(&self.importer_dirs).insert(repository.to_owned(), (fingerprint, dirs.clone()));
        Ok(dirs)
    }

    /// The indexed files directly in each of `dirs` (Go packages), as (dir, path) pairs.
    pub async fn files_in_dirs(
        &self,
        repository: &str,
        dirs: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT d.dir, f.file_path
             FROM unnest($2::text[]) AS d(dir)
             JOIN LATERAL (
               SELECT file_path FROM indexed_files f
               WHERE f.repository = $1 AND f.error IS NULL
                 AND CASE WHEN d.dir = '' THEN position('/' in f.file_path) = 0
                     ELSE f.file_path ~>=~ (d.dir || '/') AND f.file_path ~<~ (d.dir || '0')
                          AND position('/' in substr(f.file_path, length(d.dir) + 2)) = 0 END
               LIMIT 200) f ON true",
        )
        .bind(repository)
        .bind(dirs)
        .fetch_all(&self.pool)
        .await
        .map_err(q("listing a package's files"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("dir"), r.get("file_path")))
            .collect())
    }

    /// Which of these (repository, path) files `index.component_rules` made tests (component
    /// type "test"), so that `impact` and search call the same files tests.
    pub async fn test_files(
        &self,
        files: &[(String, String)],
    ) -> Result<HashSet<(String, String)>, StoreError> {
        let (repos, paths): (Vec<&str>, Vec<&str>) =
            files.iter().map(|(r, p)| (r.as_str(), p.as_str())).unzip();
        let rows = sqlx::query(
            "SELECT f.repository, f.file_path
             FROM unnest($1::text[], $2::text[]) AS k(repository, file_path)
             JOIN indexed_files f USING (repository, file_path)
             WHERE f.component_type = 'test'",
        )
        .bind(&repos)
        .bind(&paths)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up test files"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("repository"), r.get("file_path")))
            .collect())
    }

    /// One indexed file's id, language and whether it is there, by path.
    pub async fn file_ids(
        &self,
        scope: &Scope,
        repository: Option<&str>,
        path: &str,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        let repos = repositories(scope, repository);
        let rows = sqlx::query(
            "SELECT repository, id FROM indexed_files
             WHERE repository = ANY($1) AND file_path = $2 AND error IS NULL
             ORDER BY repository",
        )
        .bind(&repos)
        .bind(path)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up a file"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("repository"), r.get("id")))
            .collect())
    }
}
