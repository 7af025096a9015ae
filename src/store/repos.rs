//! The repositories table: which root each repository name stands for, its workspace, where it
//! came from and how far its indexing is.
//!
//! A name is claimed by one root. Claiming a name recorded for another root that still exists
//! is an error ([`StoreError::NameTaken`]): the rows of a repository are only ever swept by the
//! root that owns it. A recorded root that is gone is taken to have moved.

use std::path::Path;

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, q};

/// Where a repository came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A root given on the command line or in `[[repositories]]`.
    Local,
    /// Added by a repository request (NATS); restored when the daemon starts.
    Request,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Local => "local",
            Origin::Request => "request",
        }
    }

    fn parse(s: &str) -> Self {
        if s == "request" {
            Origin::Request
        } else {
            Origin::Local
        }
    }
}

/// How far a repository's indexing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepoState {
    /// Recorded; its first pass (or clone) has not finished.
    Initializing,
    /// A pass is running.
    Indexing,
    /// The index matches the disk as of the last pass.
    Ready,
    /// The last pass or clone failed (`state_error` says why); retried.
    Failed,
    /// A request removes it: every daemon's keeper lets go, and whoever takes its lease next
    /// deletes its rows ([`crate::roots`]). Never overwritten by another state.
    Removing,
}

impl RepoState {
    pub fn as_str(self) -> &'static str {
        match self {
            RepoState::Initializing => "initializing",
            RepoState::Indexing => "indexing",
            RepoState::Ready => "ready",
            RepoState::Failed => "failed",
            RepoState::Removing => "removing",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "initializing" => RepoState::Initializing,
            "indexing" => RepoState::Indexing,
            "failed" => RepoState::Failed,
            "removing" => RepoState::Removing,
            _ => RepoState::Ready,
        }
    }
}

/// A repository as recorded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoRecord {
    pub id: i64,
    pub name: String,
    pub workspace: String,
    pub root: String,
    pub origin: Origin,
    pub git_url: Option<String>,
    pub state: RepoState,
    pub state_error: Option<String>,
    pub last_indexed: Option<DateTime<Utc>>,
}

/// A repository to claim: its name for its root, in its workspace.
#[derive(Debug, Clone, Copy)]
pub struct RepoClaim<'a> {
    pub name: &'a str,
    pub root: &'a str,
    pub workspace: &'a str,
    pub origin: Origin,
    pub git_url: Option<&'a str>,
}

/// What claiming a name found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// The name was free: recorded now.
    New,
    /// Already recorded for this root.
    Same,
    /// Recorded for a root that no longer exists: now this one's.
    Moved { from: String },
}

const RECORD_COLUMNS: &str = "id, name, workspace, root_path, origin, git_url, state, state_error, \
     last_indexed";

fn record(r: &sqlx::postgres::PgRow) -> RepoRecord {
    RepoRecord {
        id: r.get("id"),
        name: r.get("name"),
        workspace: r.get("workspace"),
        root: r.get("root_path"),
        origin: Origin::parse(r.get::<&str, _>("origin")),
        git_url: r.get("git_url"),
        state: RepoState::parse(r.get::<&str, _>("state")),
        state_error: r.get("state_error"),
        last_indexed: r.get("last_indexed"),
    }
}

impl Store {
    /// Records that `claim.root` is repository `claim.name`, unless another root that still
    /// exists holds the name. The workspace and origin recorded are the claim's.
    pub async fn claim_repository(&self, claim: &RepoClaim<'_>) -> Result<Claimed, StoreError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("recording the repository"))?;
        let recorded: Option<(String, String)> = sqlx::query_as(
            "SELECT root_path, workspace FROM repositories WHERE name = $1 FOR UPDATE",
        )
        .bind(claim.name)
        .fetch_optional(&mut *tx)
        .await
        .map_err(q("recording the repository"))?;
        let old_workspace = recorded.as_ref().map(|(_, w)| w.clone());
        let claimed = match recorded {
            None => Claimed::New,
            Some((root, _)) if root == claim.root => Claimed::Same,
            // A root recorded before roots were (`''`, migration 0010) is adopted.
            Some((root, _)) if root.is_empty() => Claimed::Moved { from: root },
            Some((root, _)) if Path::new(&root).is_dir() => {
                return Err(StoreError::NameTaken {
                    name: claim.name.to_owned(),
                    recorded: root,
                    root: claim.root.to_owned(),
                });
            }
            Some((root, _)) => Claimed::Moved { from: root },
        };
        sqlx::query(
            "INSERT INTO repositories (name, root_path, workspace, origin, git_url, state)
             VALUES ($1, $2, $3, $4, $5, 'initializing')
             ON CONFLICT (name) DO UPDATE SET root_path = EXCLUDED.root_path,
               workspace = EXCLUDED.workspace, origin = EXCLUDED.origin,
               git_url = EXCLUDED.git_url,
               generation = repositories.generation
                 + (repositories.workspace IS DISTINCT FROM EXCLUDED.workspace)::int",
        )
        .bind(claim.name)
        .bind(claim.root)
        .bind(claim.workspace)
        .bind(claim.origin.as_str())
        .bind(claim.git_url)
        .execute(&mut *tx)
        .await
        .map_err(q("recording the repository"))?;
        // Rows carry their workspace (migration 0013): a repository that changes workspace
        // takes its rows along, in the same transaction as the record.
        if old_workspace.is_some_and(|w| w != claim.workspace) {
            move_rows(&mut tx, claim.name, claim.workspace).await?;
        }
        tx.commit().await.map_err(q("recording the repository"))?;
        Ok(claimed)
    }

    /// Moves a recorded repository, rows and all, to another workspace (what a restart with
    /// the repository configured in another workspace does). For benchmarks and tools; the
    /// daemon's own path is [`Store::claim_repository`].
    pub async fn move_to_workspace(&self, name: &str, workspace: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(q("moving a repository"))?;
        let changed = sqlx::query(
            "UPDATE repositories SET workspace = $2, generation = generation + 1
             WHERE name = $1 AND workspace <> $2",
        )
        .bind(name)
        .bind(workspace)
        .execute(&mut *tx)
        .await
        .map_err(q("moving a repository"))?;
        if changed.rows_affected() > 0 {
            move_rows(&mut tx, name, workspace).await?;
        }
        tx.commit().await.map_err(q("moving a repository"))?;
        Ok(())
    }

    /// Records a repository's indexing state; `Ready` also stamps `last_indexed`. A repository
    /// being removed stays `removing`.
    pub async fn set_repository_state(
        &self,
        name: &str,
        state: RepoState,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE repositories SET state = $2, state_error = $3,
               last_indexed = CASE WHEN $2 = 'ready' THEN now() ELSE last_indexed END
             WHERE name = $1 AND state <> 'removing'",
        )
        .bind(name)
        .bind(state.as_str())
        .bind(error)
        .execute(&self.pool)
        .await
        .map_err(q("recording the repository's state"))?;
        Ok(())
    }

    /// The recorded repositories, of one workspace or of all, by name.
    pub async fn repositories(
        &self,
        workspace: Option<&str>,
    ) -> Result<Vec<RepoRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {RECORD_COLUMNS} FROM repositories
             WHERE $1::text IS NULL OR workspace = $1 ORDER BY name"
        ))
        .bind(workspace)
        .fetch_all(&self.pool)
        .await
        .map_err(q("listing repositories"))?;
        Ok(rows.iter().map(record).collect())
    }

    /// The names other than `name` recorded for `root` in `workspace`: the same files indexed
    /// twice, under two names.
    pub async fn other_names_at(
        &self,
        root: &str,
        workspace: &str,
        name: &str,
    ) -> Result<Vec<String>, StoreError> {
        let recorded = self.repositories(Some(workspace)).await?;
        Ok(recorded
            .into_iter()
            .filter(|r| r.root == root && r.name != name)
            .map(|r| r.name)
            .collect())
    }

    /// One repository, by name.
    pub async fn repository(&self, name: &str) -> Result<Option<RepoRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECORD_COLUMNS} FROM repositories WHERE name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map_err(q("reading a repository"))?;
        Ok(row.as_ref().map(record))
    }

    /// Deletes a repository and everything indexed from it, in one transaction. Returns whether
    /// it was recorded.
    pub async fn remove_repository(&self, name: &str) -> Result<bool, StoreError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("removing a repository"))?;
        let statements = [
            "DELETE FROM codebase_index WHERE repository = $1",
            "DELETE FROM file_terms WHERE file_id IN
               (SELECT id FROM indexed_files WHERE repository = $1)",
            "DELETE FROM indexed_files WHERE repository = $1",
            "DELETE FROM repo_terms WHERE repository = $1",
            "DELETE FROM code_definitions WHERE repository = $1",
            "DELETE FROM code_references WHERE repository = $1",
            "DELETE FROM code_imports WHERE repository = $1",
            "DELETE FROM code_members WHERE repository = $1",
        ];
        for sql in statements {
            sqlx::query(sql)
                .bind(name)
                .execute(&mut *tx)
                .await
                .map_err(q("removing a repository"))?;
        }
        let removed = sqlx::query("DELETE FROM repositories WHERE name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(q("removing a repository"))?
            .rows_affected();
        tx.commit().await.map_err(q("removing a repository"))?;
        Ok(removed > 0)
    }
}

/// Sets the workspace the rows of repository `name` carry (`codebase_index`, `file_terms`).
async fn move_rows(
    tx: &mut sqlx::PgConnection,
    name: &str,
    workspace: &str,
) -> Result<(), StoreError> {
    let moving = || q("moving the repository's rows to its new workspace");
    sqlx::query("UPDATE codebase_index SET workspace = $2 WHERE repository = $1")
        .bind(name)
        .bind(workspace)
        .execute(&mut *tx)
        .await
        .map_err(moving())?;
    sqlx::query(
        "UPDATE file_terms p SET workspace = $2 FROM indexed_files f
         WHERE f.id = p.file_id AND f.repository = $1",
    )
    .bind(name)
    .bind(workspace)
    .execute(&mut *tx)
    .await
    .map_err(moving())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_as_itself() {
        for state in [
            RepoState::Initializing,
            RepoState::Indexing,
            RepoState::Ready,
            RepoState::Failed,
            RepoState::Removing,
        ] {
            assert_eq!(RepoState::parse(state.as_str()), state);
        }
    }
}
