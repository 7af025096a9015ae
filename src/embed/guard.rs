//! What stands between the daemon and any embedding backend: fair scheduling, a circuit
//! breaker, and isolation of inputs the model rejects.
//!
//! - **Queries first.** At most `concurrency` calls reach the backend at once (one Ollama
//!   process embeds one request at a time; the local model uses every core). Bulk work is cut
//!   into batches of `batch_size` and takes a slot per batch, and a waiting query takes the next
//!   free slot before any waiting batch: a search waits behind at most the batches already
//!   running, never behind a re-index. A backend whose queries run on a model of their own
//!   ([`Embedder::queries_apart`], the local model's 8-bit copy) takes queries past the gate:
//!   they wait for no batch at all.
//! - **A circuit breaker.** After [`TRIP_AFTER`] consecutive server-level failures (unreachable,
//!   timeout, 5xx, model missing) calls fail at once with [`EmbedError::CircuitOpen`] for a
//!   cool-down that doubles up to [`MAX_COOLDOWN`], then one trial call goes through (a trial
//!   dropped by its caller, a query past its deadline, counts as failed: [`Verdict`]). A dead
//!   server is not hammered, and searches fall back to lexical at once instead of waiting for
//!   a timeout.
//! - **Isolation.** [`embed_documents`] embeds batch by batch and keeps what succeeded. A batch
//!   that fails with an error that may be caused by one input (a 4xx or 500, an unreadable
//!   answer) is split in halves until the culprit is alone; it is reported as rejected and its
//!   neighbours get their vectors. A server-level failure leaves the rest pending, for the
//!   backfill to embed later. An input that fails with nothing else embedded in the call is
//!   judged by a one-word canary: the server answers it, so the input is rejected.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio::sync::Notify;

use super::{EmbedError, Embedder, InputKind};

/// Consecutive server-level failures that open the breaker.
pub const TRIP_AFTER: u32 = 5;
/// First cool-down; each failed trial doubles it.
const FIRST_COOLDOWN: Duration = Duration::from_secs(2);
/// Longest cool-down.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(60);

/// An embedder behind the gate and the breaker.
pub struct Guarded {
    inner: Box<dyn Embedder>,
    batch_size: usize,
    gate: Gate,
    breaker: Breaker,
}

impl Guarded {
    pub fn new(inner: Box<dyn Embedder>, batch_size: usize, concurrency: usize) -> Self {
        Self {
            inner,
            batch_size: batch_size.max(1),
            gate: Gate::new(concurrency.max(1)),
            breaker: Breaker::default(),
        }
    }

    /// One backend call for one batch, through the breaker and the gate (which a query to a
    /// model of its own goes past).
    async fn call(&self, texts: &[String], kind: InputKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let apart = kind == InputKind::Query && self.inner.queries_apart();
        let _slot = match apart {
            true => None,
            false => Some(self.gate.acquire(kind).await),
        };
        // Checked after the wait: the breaker may have opened meanwhile.
        let verdict = self.breaker.admit()?;
        let result = self.inner.embed(texts, kind).await;
        verdict.record(result.as_ref().err());
        result
    }
}

impl Embedder for Guarded {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn batch_size(&self) -> usize {
        self.batch_size
    }

    fn queries_apart(&self) -> bool {
        self.inner.queries_apart()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            if texts.len() <= self.batch_size {
                return self.call(texts, kind).await;
            }
            let mut out = vec![Vec::new(); texts.len()];
            for batch in by_length(texts).chunks(self.batch_size) {
                let inputs: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
                for (&i, v) in batch.iter().zip(self.call(&inputs, kind).await?) {
                    out[i] = v;
                }
            }
            Ok(out)
        })
    }
}

/// Indexes of `texts`, longest first: batches of similar length pad less.
fn by_length(texts: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
    order
}

/// The outcome of embedding documents one batch at a time.
#[derive(Debug, Default)]
pub struct Documents {
    /// One entry per input: its vector, or `None` when it was rejected or is pending.
    pub vectors: Vec<Option<Vec<f32>>>,
    /// Inputs the model refused on their own (index, error); their neighbours were embedded.
    pub rejected: Vec<(usize, String)>,
    /// Why some inputs are pending (the embedder could not be used), if any are.
    pub unavailable: Option<EmbedError>,
}

impl Documents {
    pub fn pending(&self) -> usize {
        let rejected = self.rejected.len();
        self.vectors.iter().filter(|v| v.is_none()).count() - rejected
    }
}

/// The input that tells a server refusing some inputs from a server that is down.
const CANARY: &str = "ok";

/// Embeds documents batch by batch, isolating inputs the model rejects (see the module docs).
/// Never fails as a whole: what could not be embedded is pending or rejected.
pub async fn embed_documents(embedder: &dyn Embedder, texts: &[String]) -> Documents {
    let mut out = Documents {
        vectors: vec![None; texts.len()],
        ..Default::default()
    };
    // Inputs that failed alone. Only a server that embedded something else in this call is
    // known to be up: then they are refused; otherwise they are pending like the rest.
    let mut suspects: Vec<(usize, EmbedError)> = Vec::new();
    let mut any_success = false;
    let order = by_length(texts);
    // Groups still to embed; a failed group is split and its halves go to the back, so the
    // breaker sees successes of clean halves between failures of the guilty ones.
    let mut queue: std::collections::VecDeque<Vec<usize>> = order
        .chunks(embedder.batch_size().max(1))
        .map(<[usize]>::to_vec)
        .collect();
    while let Some(group) = queue.pop_front() {
        let inputs: Vec<String> = group.iter().map(|&i| texts[i].clone()).collect();
        match embedder.embed(&inputs, InputKind::Document).await {
            Ok(vectors) => {
                any_success = true;
                for (&i, v) in group.iter().zip(vectors) {
                    out.vectors[i] = Some(v);
                }
            }
            Err(e) if e.may_be_input_specific() && group.len() > 1 => {
                let (left, right) = group.split_at(group.len() / 2);
                queue.push_back(left.to_vec());
                queue.push_back(right.to_vec());
            }
            Err(e) if e.may_be_input_specific() => suspects.push((group[0], e)),
            Err(e) => {
                // The server, not the input: everything not embedded yet stays pending.
                out.unavailable = Some(e);
                break;
            }
        }
    }
    // Inputs that failed alone, and nothing else tried in this call: a lone new chunk of an
    // edit, or the last one of a backlog. Whether the server is down or refuses just these,
    // a one-word input tells; without it such an input would stay pending for ever, retried
    // (and counted against the server) at every backfill.
    if !any_success && !suspects.is_empty() && out.unavailable.is_none() {
        match embedder
            .embed(&[CANARY.to_owned()], InputKind::Document)
            .await
        {
            Ok(_) => any_success = true,
            Err(e) => out.unavailable = Some(e),
        }
    }
    if any_success {
        for (i, e) in suspects {
            tracing::warn!(error = %e, chars = texts[i].len(), "the embedder refused one input; it is recorded and its neighbours go on");
            out.rejected.push((i, e.to_string()));
        }
    } else if let Some((_, e)) = suspects.pop() {
        out.unavailable.get_or_insert(e);
    }
    out
}

/// Admits a bounded number of calls, queries before bulk batches.
struct Gate {
    limit: usize,
    state: Mutex<GateState>,
    changed: Notify,
}

#[derive(Default)]
struct GateState {
    running: usize,
    queries_waiting: usize,
}

struct Slot<'a>(&'a Gate);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.lock().running -= 1;
        self.0.changed.notify_waiters();
    }
}

/// Counts a waiting query until it gets a slot or gives up (its future dropped).
struct Waiting<'a>(&'a Gate);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.lock().queries_waiting -= 1;
        self.0.changed.notify_waiters();
    }
}

impl Gate {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            state: Mutex::new(GateState::default()),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        // The state is two counters updated in one step each: a panic cannot leave it torn.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn acquire(&self, kind: InputKind) -> Slot<'_> {
        let waiting = (kind == InputKind::Query).then(|| {
            self.lock().queries_waiting += 1;
            Waiting(self)
        });
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut s = self.lock();
                // A query's own count is in `queries_waiting`: only bulk work yields to it.
                let may_run =
                    s.running < self.limit && (waiting.is_some() || s.queries_waiting == 0);
                if may_run {
                    s.running += 1;
                    drop(s);
                    drop(waiting);
                    return Slot(self);
                }
            }
            changed.await;
        }
    }
}

/// Closed → open after [`TRIP_AFTER`] failures → one trial after the cool-down.
#[derive(Default)]
struct Breaker {
    state: Mutex<BreakerState>,
}

#[derive(Default)]
struct BreakerState {
    failures: u32,
    open_until: Option<Instant>,
    cooldown: Duration,
    trial_running: bool,
    last_error: String,
}

impl Breaker {
    fn lock(&self) -> std::sync::MutexGuard<'_, BreakerState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lets a call through, or says why not. The call's outcome must reach [`Verdict::record`].
    fn admit(&self) -> Result<Verdict<'_>, EmbedError> {
        let mut s = self.lock();
        let Some(until) = s.open_until else {
            return Ok(Verdict {
                breaker: self,
                trial: false,
            });
        };
        let now = Instant::now();
        if now < until || s.trial_running {
            return Err(EmbedError::CircuitOpen {
                retry_in_secs: until.saturating_duration_since(now).as_secs().max(1),
                last: s.last_error.clone(),
            });
        }
        s.trial_running = true;
        Ok(Verdict {
            breaker: self,
            trial: true,
        })
    }

    fn record(&self, error: Option<&EmbedError>) {
        let mut s = self.lock();
        let trial = std::mem::take(&mut s.trial_running);
        match error {
            Some(e) if e.is_server_level() => Self::failed(&mut s, trial, e.to_string()),
            // Success, or an input the server refused (so it is up): close.
            _ => {
                if s.open_until.is_some() {
                    tracing::info!("embedder answering again");
                }
                *s = BreakerState::default();
            }
        }
    }

    /// A server-level failure: counted, and the breaker opens after [`TRIP_AFTER`] of them or
    /// a failed trial (for twice the last cool-down).
    fn failed(s: &mut BreakerState, trial: bool, error: String) {
        s.failures += 1;
        if trial || s.failures >= TRIP_AFTER {
            s.cooldown = if trial {
                (s.cooldown * 2).min(MAX_COOLDOWN)
            } else {
                FIRST_COOLDOWN
            };
            // Jitter, so several daemons do not retry one server in step.
            let jitter = s
                .cooldown
                .mul_f64(0.2 * f64::from(jitter_percent()) / 100.0);
            s.open_until = Some(Instant::now() + s.cooldown + jitter);
            tracing::warn!(%error, cooldown_secs = s.cooldown.as_secs(),
                "embedder failing; pausing calls to it (searches answer lexically, indexing stores chunks with pending vectors)");
        }
        s.last_error = error;
    }
}

/// A call the breaker let through, waiting for its outcome. A trial call dropped before it
/// ends (a query past its deadline gives up on a server that hangs) counts as a failed trial:
/// without an outcome the breaker would wait for the trial for ever, every later call refused,
/// searches lexical and the backlog pending until a restart.
struct Verdict<'a> {
    breaker: &'a Breaker,
    trial: bool,
}

impl Verdict<'_> {
    fn record(mut self, error: Option<&EmbedError>) {
        self.trial = false;
        self.breaker.record(error);
    }
}

impl Drop for Verdict<'_> {
    fn drop(&mut self) {
        if self.trial {
            let mut s = self.breaker.lock();
            if std::mem::take(&mut s.trial_running) {
                Breaker::failed(
                    &mut s,
                    true,
                    "the trial call was given up before the embedder answered".into(),
                );
            }
        }
    }
}

/// 0..100 from the clock: jitter needs spread, not quality.
pub(crate) fn jitter_percent() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() % 100)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Fails inputs containing "poison" with a 500, or everything while `down`. Clones share
    /// their counters, so a test keeps one while the guard owns another.
    #[derive(Clone, Default)]
    struct Flaky {
        calls: Arc<AtomicUsize>,
        down: Arc<std::sync::atomic::AtomicBool>,
        /// Never answers (a server that accepts and hangs).
        hang: Arc<std::sync::atomic::AtomicBool>,
    }

    impl Embedder for Flaky {
        fn model_id(&self) -> &str {
            "test/flaky"
        }
        fn dimension(&self) -> usize {
            2
        }
        fn embed<'a>(
            &'a self,
            texts: &'a [String],
            _kind: InputKind,
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            Box::pin(async move {
                self.calls.fetch_add(1, Ordering::SeqCst);
                if self.hang.load(Ordering::SeqCst) {
                    std::future::pending::<()>().await;
                }
                if self.down.load(Ordering::SeqCst) {
                    return Err(EmbedError::Unreachable {
                        url: "test".into(),
                        message: "connection refused".into(),
                    });
                }
                if texts.iter().any(|t| t.contains("poison")) {
                    return Err(EmbedError::Server {
                        url: "test".into(),
                        status: 500,
                        message: "NaN".into(),
                    });
                }
                Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
            })
        }
    }

    #[tokio::test]
    async fn one_poisoned_input_fails_alone() {
        let inner = Flaky::default();
        let guarded = Guarded::new(Box::new(inner.clone()), 4, 1);
        let mut texts: Vec<String> = (0..16).map(|i| format!("fn f{i}() {{}}")).collect();
        texts[5] = "fn poison() {}".into();
        let docs = embed_documents(&guarded, &texts).await;
        assert_eq!(docs.rejected.len(), 1);
        assert_eq!(docs.rejected[0].0, 5);
        assert!(docs.unavailable.is_none());
        assert_eq!(docs.pending(), 0);
        for (i, v) in docs.vectors.iter().enumerate() {
            assert_eq!(v.is_some(), i != 5, "input {i}");
        }
        // The breaker stayed closed: a clean call goes through.
        assert!(guarded.embed(&["x".into()], InputKind::Query).await.is_ok());
    }

    #[tokio::test]
    async fn a_poisoned_input_alone_is_refused_when_the_server_answers_others() {
        let inner = Flaky::default();
        let guarded = Guarded::new(Box::new(inner.clone()), 4, 1);
        let docs = embed_documents(&guarded, &["fn poison() {}".into()]).await;
        assert_eq!(docs.rejected.len(), 1, "refused, not pending for ever");
        assert!(docs.unavailable.is_none());
        // The same input while the server is down: pending, nothing refused.
        inner.down.store(true, Ordering::SeqCst);
        let docs = embed_documents(&guarded, &["fn poison() {}".into()]).await;
        assert!(docs.rejected.is_empty());
        assert_eq!(docs.pending(), 1);
        assert!(docs.unavailable.is_some());
    }

    #[tokio::test]
    async fn breaker_opens_then_lets_a_trial_through() {
        let inner = Flaky::default();
        inner.down.store(true, Ordering::SeqCst);
        let guarded = Guarded::new(Box::new(inner.clone()), 4, 1);
        for _ in 0..TRIP_AFTER {
            let e = guarded.embed(&["x".into()], InputKind::Query).await;
            assert!(matches!(e, Err(EmbedError::Unreachable { .. })));
        }
        let calls = inner.calls.load(Ordering::SeqCst);
        let e = guarded.embed(&["x".into()], InputKind::Query).await;
        assert!(matches!(e, Err(EmbedError::CircuitOpen { .. })), "{e:?}");
        assert!(e.is_err_and(|e| e.is_transient()));
        assert_eq!(
            inner.calls.load(Ordering::SeqCst),
            calls,
            "no call while open"
        );
        // Documents while open: all pending, nothing rejected.
        let docs = embed_documents(&guarded, &["a".into(), "b".into()]).await;
        assert_eq!(docs.pending(), 2);
        assert!(docs.rejected.is_empty());

        inner.down.store(false, Ordering::SeqCst);
        tokio::time::sleep(FIRST_COOLDOWN + FIRST_COOLDOWN / 4).await;
        assert!(guarded.embed(&["x".into()], InputKind::Query).await.is_ok());
    }

    /// The trial after a cool-down is a search's query, given up at its deadline while the
    /// server hangs: the breaker opens again for twice as long, instead of waiting for that
    /// trial's outcome for ever (every later call refused until a restart).
    #[tokio::test]
    async fn a_trial_given_up_by_its_caller_counts_as_failed() {
        let inner = Flaky::default();
        inner.down.store(true, Ordering::SeqCst);
        let guarded = Guarded::new(Box::new(inner.clone()), 4, 1);
        for _ in 0..TRIP_AFTER {
            assert!(
                guarded
                    .embed(&["x".into()], InputKind::Query)
                    .await
                    .is_err()
            );
        }
        tokio::time::sleep(FIRST_COOLDOWN + FIRST_COOLDOWN / 4).await;
        inner.down.store(false, Ordering::SeqCst);
        inner.hang.store(true, Ordering::SeqCst);
        let input = ["x".to_owned()];
        let query = guarded.embed(&input, InputKind::Query);
        let given_up = tokio::time::timeout(Duration::from_millis(100), query).await;
        assert!(given_up.is_err(), "the trial hangs, and is dropped");
        match guarded.embed(&["x".into()], InputKind::Query).await {
            Err(EmbedError::CircuitOpen {
                retry_in_secs,
                last,
            }) => {
                assert!(
                    retry_in_secs >= 3,
                    "open for twice the cool-down, not for a trial that never ends: {retry_in_secs}"
                );
                assert!(last.contains("given up"), "{last}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// Holds every document call until `release` is notified; answers queries at once.
    struct Held {
        apart: bool,
        release: Arc<tokio::sync::Notify>,
    }

    impl Embedder for Held {
        fn model_id(&self) -> &str {
            "test/held"
        }
        fn dimension(&self) -> usize {
            2
        }
        fn queries_apart(&self) -> bool {
            self.apart
        }
        fn embed<'a>(
            &'a self,
            texts: &'a [String],
            kind: InputKind,
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            Box::pin(async move {
                if kind == InputKind::Document {
                    self.release.notified().await;
                }
                Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
            })
        }
    }

    #[tokio::test]
    async fn a_query_to_a_model_of_its_own_does_not_wait_for_a_running_batch() {
        for apart in [true, false] {
            let release = Arc::new(tokio::sync::Notify::new());
            let guarded = Arc::new(Guarded::new(
                Box::new(Held {
                    apart,
                    release: release.clone(),
                }),
                4,
                1,
            ));
            let bulk = tokio::spawn({
                let guarded = guarded.clone();
                async move { embed_documents(&*guarded, &["a".into(), "b".into()]).await }
            });
            // The batch holds the gate's one slot.
            while guarded.gate.lock().running == 0 {
                tokio::task::yield_now().await;
            }
            let texts = ["q".to_owned()];
            let query = guarded.embed(&texts, InputKind::Query);
            let wait = if apart { 5_000 } else { 100 };
            let answered = tokio::time::timeout(Duration::from_millis(wait), query).await;
            assert_eq!(answered.is_ok(), apart, "apart: {apart}");
            release.notify_one();
            assert_eq!(bulk.await.expect("bulk").pending(), 0);
        }
    }

    #[tokio::test]
    async fn a_query_overtakes_waiting_bulk_batches() {
        let gate = Arc::new(Gate::new(1));
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = gate.acquire(InputKind::Document).await;
        let mut tasks = Vec::new();
        for (name, kind) in [
            ("bulk1", InputKind::Document),
            ("bulk2", InputKind::Document),
            ("query", InputKind::Query),
        ] {
            let (gate, order) = (gate.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _slot = gate.acquire(kind).await;
                order.lock().expect("lock").push(name);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(first);
        for t in tasks {
            t.await.expect("task");
        }
        let order = order.lock().expect("lock").clone();
        assert_eq!(order[0], "query", "{order:?}");
    }
}
