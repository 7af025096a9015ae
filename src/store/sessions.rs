//! The store's connection pools and what their sessions are set for.
//!
//! Every connection walks HNSW graphs with iterative scans and plans prepared statements once
//! ([`pool_options`]). The vector search sometimes needs other session settings: a longer or
//! shorter walk (a graph of 500,000 rows and more, a configured `search.hnsw_ef_search`, a
//! filter that discards most rows), and a plan made for the filter's values. Setting them in a
//! transaction costs two more round trips per search: 1 to 2 ms of an unfiltered hybrid
//! search's p50 at a million chunks, 1.3 to 4 ms of a filtered one at 100k
//! (docs/BENCHMARKS.md). So the store keeps, beside its main pool, a small pool per
//! [`Session`] its searches have needed, whose connections are set that way for good.
//! A pool that cannot get a connection (the server at `max_connections`, say) is left alone
//! for a while, and the search falls back to the transaction on the main pool.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// A pooled connection idle for longer than this is pinged before it is handed out.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(2);
/// Every main-pool connection's `hnsw.ef_search`: the automatic candidate list of an
/// unfiltered walk of a graph below 500,000 rows ([`super::retrieve::ef_search_for`]).
pub(super) const SESSION_EF_SEARCH: u32 = 100;
/// How long a session pool's connections may stay idle before they are closed.
const SESSION_POOL_IDLE: Duration = Duration::from_secs(60);
/// The longest a search waits for a session pool's connection before it falls back to a
/// transaction on the main pool (the whole connect timeout when that is shorter).
const SESSION_POOL_WAIT: Duration = Duration::from_secs(2);
/// How long a session pool that could not give a connection is passed over.
const SESSION_POOL_REST: Duration = Duration::from_secs(30);

/// What a connection's session is set for, beyond what every connection has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Session {
    /// `hnsw.ef_search`: how many candidates an HNSW walk keeps.
    pub ef_search: u32,
    /// `plan_cache_mode = force_custom_plan` instead of `force_generic_plan`: every run of a
    /// prepared statement is planned for its values.
    pub custom_plans: bool,
}

impl Session {
    /// The main pool's sessions.
    pub const MAIN: Session = Session {
        ef_search: SESSION_EF_SEARCH,
        custom_plans: false,
    };

    /// The statements that set a session this way, for a whole connection (`SET`) or for one
    /// transaction (`SET LOCAL`).
    pub(super) fn settings(self, local: bool) -> [String; 2] {
        let set = if local { "SET LOCAL" } else { "SET" };
        let plans = if self.custom_plans {
            "force_custom_plan"
        } else {
            "force_generic_plan"
        };
        [
            format!("{set} plan_cache_mode = {plans}"),
            format!("{set} hnsw.ef_search = {}", self.ef_search),
        ]
    }
}

/// The options of every pool of the store: at most `max_connections`, pinged before use only
/// after a pause, with the session settings searches rely on.
pub(super) fn pool_options(
    max_connections: u32,
    acquire_timeout: Duration,
    session: Session,
) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(acquire_timeout)
        // A connection used in the last seconds is handed out as it is; one idle for
        // longer is pinged first, in case the server restarted or a proxy dropped it
        // meanwhile. Pinging every time (sqlx's default) put a round trip before each of
        // a search's statements: 1 to 4 ms of a filtered hybrid search on two cores
        // (docs/BENCHMARKS.md).
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > IDLE_BEFORE_PING {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                // - HNSW iterative scans (pgvector >= 0.8), so that filtered searches
                //   keep scanning until they have `limit` rows instead of silently
                //   returning fewer.
                // - On the main pool, prepared statements use one plan, made at their first
                //   run: planning the lexical queries again at each run cost more than
                //   running them (1 to 5 ms). A filtered vector search, whose best plan
                //   depends on how much its filters let through, runs on connections that
                //   plan each run.
                // - The HNSW walk's candidate list.
                let [plans, walk] = session.settings(false);
                for setting in [
                    "SET hnsw.iterative_scan = relaxed_order".to_owned(),
                    plans,
                    walk,
                ] {
                    sqlx::query(&setting).execute(&mut *conn).await?;
                }
                Ok(())
            })
        })
}

/// The pools of sessions other than [`Session::MAIN`], made the first time a search needs
/// one.
pub(super) struct SessionPools {
    options: PgConnectOptions,
    max_connections: u32,
    acquire_timeout: Duration,
    pools: Mutex<HashMap<Session, SessionPool>>,
}

struct SessionPool {
    pool: PgPool,
    /// When it last failed to give a connection.
    failed: Option<Instant>,
}

impl SessionPools {
    /// Pools of a quarter of `max_connections` each (at least one), that close connections
    /// idle for a minute.
    pub(super) fn new(options: PgConnectOptions, max_connections: u32, connect: Duration) -> Self {
        Self {
            options,
            max_connections: (max_connections / 4).max(1),
            acquire_timeout: connect.min(SESSION_POOL_WAIT),
            pools: Mutex::default(),
        }
    }

    fn pools(&self) -> MutexGuard<'_, HashMap<Session, SessionPool>> {
        self.pools.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pool of `session`, unless it failed to give a connection in the last
    /// [`SESSION_POOL_REST`].
    pub(super) fn get(&self, session: Session) -> Option<PgPool> {
        let mut pools = self.pools();
        let entry = pools.entry(session).or_insert_with(|| SessionPool {
            pool: pool_options(self.max_connections, self.acquire_timeout, session)
                .idle_timeout(SESSION_POOL_IDLE)
                .connect_lazy_with(self.options.clone()),
            failed: None,
        });
        if entry
            .failed
            .is_some_and(|at| at.elapsed() < SESSION_POOL_REST)
        {
            return None;
        }
        Some(entry.pool.clone())
    }

    /// Notes that `session`'s pool could not give a connection (`error`): searches pass it
    /// over for [`SESSION_POOL_REST`], setting the session in a transaction instead.
    pub(super) fn failed(&self, session: Session, error: &sqlx::Error) {
        tracing::warn!(
            %error, ?session,
            "no connection for this search's session settings; setting them in a transaction \
             for the next {} s",
            SESSION_POOL_REST.as_secs()
        );
        if let Some(entry) = self.pools().get_mut(&session) {
            entry.failed = Some(Instant::now());
        }
    }

    /// Connections open in every session pool, and how many of them are idle.
    pub(super) fn connections(&self) -> (u32, usize) {
        self.pools().values().fold((0, 0), |(size, idle), p| {
            (size + p.pool.size(), idle + p.pool.num_idle())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_set_for_good_or_for_one_transaction() {
        let custom = Session {
            ef_search: 200,
            custom_plans: true,
        };
        assert_eq!(
            custom.settings(true),
            [
                "SET LOCAL plan_cache_mode = force_custom_plan".to_owned(),
                "SET LOCAL hnsw.ef_search = 200".to_owned(),
            ]
        );
        assert_eq!(
            Session::MAIN.settings(false),
            [
                "SET plan_cache_mode = force_generic_plan".to_owned(),
                "SET hnsw.ef_search = 100".to_owned(),
            ]
        );
    }
}
