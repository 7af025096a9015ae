//! Indexing leases: each repository is indexed by one daemon at a time, however many serve.
//!
//! A lease is a PostgreSQL session advisory lock, keyed by the repository's name, held on a
//! connection of its own (outside the pool, so leases never starve searches of connections).
//! It lasts as long as that connection: a daemon that stops releases it, and one that dies
//! loses it when the server sees its connection close (at once for a killed process; after the
//! server's `tcp_keepalives_*` settings for a host that vanished). Another daemon, trying every
//! few seconds, then takes the repository over. The holder checks its connection as often,
//! and stops indexing when the lease is gone.

use sqlx::{Connection, PgConnection};

use super::{Store, StoreError, q};

/// A held lease. Dropping it closes its connection, which releases it too.
pub struct Lease {
    conn: PgConnection,
    repository: String,
}

/// The `application_name` lease connections carry, so `pg_stat_activity` shows which daemon
/// (process id) holds which repository.
pub fn lease_application_name() -> String {
    format!("codesearch lease pid={}", std::process::id())
}

/// The advisory-lock key of the lease of the repository named by the SQL expression `name`.
fn lease_key(name: &str) -> String {
    format!("hashtextextended('codesearch.repository:' || {name}, 0)")
}

/// SQL that is true when some session (any daemon's) holds the lease of the repository named
/// by the SQL expression `name`: whether a running daemon keeps that repository up to date.
/// A bigint advisory lock shows in `pg_locks` as its high and low halves (`objsubid` 1).
pub(super) fn lease_held(name: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
           AND objsubid = 1 \
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
           AND ((classid::int8 << 32) | objid::int8) = {})",
        lease_key(name)
    )
}

impl Store {
    /// Whether some session holds the indexing lease of `repository`: one query on the pool,
    /// where [`Store::try_lease`] opens a connection of its own.
    pub async fn lease_is_held(&self, repository: &str) -> Result<bool, StoreError> {
        sqlx::query_scalar(&format!("SELECT {}", lease_held("$1")))
            .bind(repository)
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading a repository lease"))
    }

    /// Takes the indexing lease of `repository` if no other daemon holds it.
    pub async fn try_lease(&self, repository: &str) -> Result<Option<Lease>, StoreError> {
        let options = self
            .pool
            .connect_options()
            .as_ref()
            .clone()
            .application_name(&lease_application_name());
        let mut conn = PgConnection::connect_with(&options)
            .await
            .map_err(q("opening a lease connection"))?;
        let held: bool =
            sqlx::query_scalar(&format!("SELECT pg_try_advisory_lock({})", lease_key("$1")))
                .bind(repository)
                .fetch_one(&mut conn)
                .await
                .map_err(q("taking a repository lease"))?;
        if !held {
            let _ = conn.close().await;
            return Ok(None);
        }
        Ok(Some(Lease {
            conn,
            repository: repository.to_owned(),
        }))
    }
}

impl Lease {
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// Whether the lease still holds: its connection answers.
    pub async fn check(&mut self) -> bool {
        sqlx::query("SELECT 1")
            .execute(&mut self.conn)
            .await
            .is_ok()
    }

    /// Gives the lease up for another daemon to take.
    pub async fn release(mut self) {
        let _ = sqlx::query(&format!("SELECT pg_advisory_unlock({})", lease_key("$1")))
            .bind(&self.repository)
            .execute(&mut self.conn)
            .await;
        let _ = self.conn.close().await;
    }
}
