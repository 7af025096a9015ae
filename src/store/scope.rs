//! What a read may see: the repositories of one workspace.
//!
//! Every retrieval and statistics statement takes a [`Scope`], and a scope can only be made
//! by [`Store::scope`] (from the `repositories` table) or narrowed from another one, so a read
//! that forgets its workspace does not compile. The scope also carries a fingerprint of its
//! repositories' generations: cached results and statistics of a workspace stay valid while
//! it is unchanged, whatever happens in other workspaces.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use sqlx::Row;

use super::{Store, StoreError, q};
use crate::lock;

/// The repositories one read may see. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    inner: Arc<ScopeInner>,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ScopeInner {
    workspace: String,
    /// Sorted names.
    repositories: Vec<String>,
    /// Whether these are all the repositories in the database: then a statement needs no
    /// repository predicate (the common one-workspace install keeps its plans).
    complete: bool,
    /// Changes whenever any of these repositories' rows change, or the set changes.
    fingerprint: u64,
}

impl Scope {
    fn new(workspace: String, mut repositories: Vec<(String, i64)>, complete: bool) -> Self {
        repositories.sort();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        repositories.hash(&mut h);
        Self {
            inner: Arc::new(ScopeInner {
                workspace,
                repositories: repositories.into_iter().map(|(n, _)| n).collect(),
                complete,
                fingerprint: h.finish(),
            }),
        }
    }

    pub fn workspace(&self) -> &str {
        &self.inner.workspace
    }

    /// The repositories' names, sorted.
    pub fn repositories(&self) -> &[String] {
        &self.inner.repositories
    }

    pub fn contains(&self, repository: &str) -> bool {
        self.inner
            .repositories
            .binary_search_by(|r| r.as_str().cmp(repository))
            .is_ok()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.repositories.is_empty()
    }

    /// Whether the scope holds every repository in the database.
    pub fn is_whole(&self) -> bool {
        self.inner.complete
    }

    /// The repository predicate statements need: `None` when the scope is the whole database.
    pub(super) fn restriction(&self) -> Option<&[String]> {
        (!self.inner.complete).then_some(self.inner.repositories.as_slice())
    }

    /// The same restriction on tables whose rows carry their workspace (`codebase_index`,
    /// `file_terms`: migration 0013), which their indexes can use: `None` when the scope is
    /// the whole database.
    pub(super) fn workspace_restriction(&self) -> Option<&str> {
        (!self.inner.complete).then_some(self.inner.workspace.as_str())
    }

    /// Changes whenever the scope's rows change (see the module docs).
    pub fn fingerprint(&self) -> u64 {
        self.inner.fingerprint
    }
}

/// The last scope read per workspace, with the [`Signature`] it was read under.
pub(super) type ScopeCache = Arc<Mutex<HashMap<String, (Signature, Scope)>>>;

/// What the database says of a workspace's repositories in one row, computed where they are:
/// how many repositories there are, how many are the workspace's, and a sum of hashes of the
/// workspace's names and generations. The scope itself is read again only when it differs:
/// at the 2,064 repositories of the 1M-chunk scale benchmark, the signature's statement takes
/// 0.21 ms (pgbench), the rows' 0.50 ms before they are decoded, sorted and hashed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Signature {
    total: i64,
    mine: i64,
    hashes: String,
}

impl Store {
    /// The scope of `workspace`: its repositories as recorded now. A workspace nobody has
    /// indexed into is an empty scope (reads find nothing).
    pub async fn scope(&self, workspace: &str) -> Result<Scope, StoreError> {
        let row = sqlx::query(
            "SELECT count(*) AS total, count(*) FILTER (WHERE workspace = $1) AS mine, \
                    coalesce(sum(hashtextextended(name, generation)) \
                             FILTER (WHERE workspace = $1), 0)::text AS hashes \
             FROM repositories",
        )
        .bind(workspace)
        .fetch_one(&self.pool)
        .await
        .map_err(q("reading the workspace's signature"))?;
        let signature = Signature {
            total: row.get("total"),
            mine: row.get("mine"),
            hashes: row.get("hashes"),
        };
        if let Some((known, scope)) = lock(&self.scopes).get(workspace)
            && *known == signature
        {
            return Ok(scope.clone());
        }
        // Read after the signature: if the rows change in between, the scope cached here is
        // newer than its signature, and the next read (whose signature differs) reads again.
        let scope = self.read_scope(workspace).await?;
        // Only workspaces that hold repositories are kept: a request may name any workspace.
        if signature.mine > 0 {
            lock(&self.scopes).insert(workspace.to_owned(), (signature, scope.clone()));
        }
        Ok(scope)
    }

    async fn read_scope(&self, workspace: &str) -> Result<Scope, StoreError> {
        let rows = sqlx::query("SELECT name, workspace, generation FROM repositories")
            .fetch_all(&self.pool)
            .await
            .map_err(q("reading the workspace's repositories"))?;
        let total = rows.len();
        let mine: Vec<(String, i64)> = rows
            .iter()
            .filter(|r| r.get::<String, _>("workspace") == workspace)
            .map(|r| (r.get("name"), r.get("generation")))
            .collect();
        let complete = !mine.is_empty() && mine.len() == total;
        Ok(Scope::new(workspace.to_owned(), mine, complete))
    }
}
