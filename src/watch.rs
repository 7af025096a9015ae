//! File events to debounced batches of changed paths, for one root.
//!
//! The OS watcher (inotify on Linux, through `notify`) reports paths; this module drops the
//! ones the indexer would not index anyway (excluded directories, editors' temporary files,
//! other file types) and gathers the rest into a batch: a batch closes once no event arrived
//! for `debounce_ms`, or `max_delay_ms` after its first event, so a `git checkout` touching a
//! thousand files becomes a few batches, not a thousand transactions. Paths, not events, are
//! what count: an atomic save (write a temporary file, rename it over the original) is simply
//! "the original changed", and a rename is "the old path is gone, the new one exists".
//!
//! Directories are watched one by one (not recursively from the root), so ignored and excluded
//! trees such as `node_modules` or `target` cost no inotify watches. A new directory is
//! watched when it appears. Symbolic links are never followed.
//!
//! The repository's reflog directory (`.git/logs`) is watched too, when the caller gives it:
//! git appends to its `HEAD` at every commit, checkout, merge, rebase or reset, which
//! [`Change::History`] reports (after the paths of the same batch), so that the change counts
//! search weighs follow a commit within seconds rather than at the next periodic reconcile.
//!
//! When events were lost (the kernel queue overflowed, a watch could not be added) the batch
//! becomes [`Change::Rescan`]: the caller runs a full reconcile, which is the truth anyway.
//! When the root itself is deleted, moved or replaced, the watches are left on what it was:
//! [`Change::RootGone`] tells the caller to start a new watcher once the root is back.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::WatchConfig;
use crate::scan::Walker;

/// Events buffered between the OS watcher's thread and the batcher. Past this the watcher
/// reports an overflow and a reconcile catches up.
const QUEUE: usize = 65_536;

/// The advice given when the OS refuses more watches.
pub const INOTIFY_ADVICE: &str = "raise the inotify limits, e.g. `sudo sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_queued_events=65536` (persist them in /etc/sysctl.d/)";

/// What the watcher has to say.
#[derive(Debug)]
pub enum Change {
    /// Paths (relative to the root, `/`-separated) that changed, with the time of the first
    /// change of the batch.
    Paths { paths: Vec<String>, since: Instant },
    /// Events were lost: only a full reconcile can say what changed.
    Rescan { reason: String },
    /// The root itself was deleted, moved or replaced: the watches are on the directories it
    /// had, which no longer receive its events. Start a new watcher once a reconcile finds the
    /// root there again.
    RootGone { reason: String },
    /// The repository's history moved (a commit, checkout, merge, rebase or reset): its
    /// change counts are to be read again.
    History,
}

enum Signal {
    Path(PathBuf),
    /// A path deleted or renamed: on the root itself, the end of its watches.
    Gone(PathBuf),
    Lost(String),
}

/// Watches one root.
pub struct RootWatcher {
    watcher: RecommendedWatcher,
    walker: Walker,
    events: mpsc::Receiver<Signal>,
    overflowed: Arc<AtomicBool>,
    watched: HashSet<PathBuf>,
    debounce: Duration,
    max_delay: Duration,
    /// A watch could not be added: reported once as a rescan, with the advice.
    lost: Option<String>,
    /// The root went away ([`Change::RootGone`]); reported before anything else.
    root_gone: Option<String>,
    /// The reflog git appends to when the history moves (`<git dir>/logs/HEAD`), if watched.
    reflog: Option<PathBuf>,
    /// It changed since the last [`Change::History`].
    history: bool,
}

impl RootWatcher {
    /// Starts watching every directory of `walker`'s root that a walk would enter, and
    /// `reflog_dir` (the repository's `.git/logs`, [`crate::scan::history::reflog_dir`]) when
    /// given. Blocking (it walks the directories): call from a blocking thread for large trees.
    pub fn start(
        walker: Walker,
        cfg: &WatchConfig,
        reflog_dir: Option<&Path>,
    ) -> Result<Self, notify::Error> {
        let (tx, events) = mpsc::channel(QUEUE);
        let overflowed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&overflowed);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let signals: Vec<Signal> = match event {
                Ok(e) if e.need_rescan() => {
                    vec![Signal::Lost("the OS event queue overflowed".into())]
                }
                Ok(e) if matches!(e.kind, EventKind::Access(_)) => Vec::new(),
                Ok(e)
                    if matches!(
                        e.kind,
                        EventKind::Remove(_)
                            | EventKind::Modify(notify::event::ModifyKind::Name(_))
                    ) =>
                {
                    e.paths.into_iter().map(Signal::Gone).collect()
                }
                Ok(e) => e.paths.into_iter().map(Signal::Path).collect(),
                Err(e) => vec![Signal::Lost(format!("watch error: {e}"))],
            };
            for s in signals {
                if tx.try_send(s).is_err() {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        })?;
        let mut this = Self {
            watcher,
            walker,
            events,
            overflowed,
            watched: HashSet::new(),
            debounce: Duration::from_millis(cfg.debounce_ms),
            max_delay: Duration::from_millis(cfg.max_delay_ms),
            lost: None,
            root_gone: None,
            reflog: None,
            history: false,
        };
        let root = this.walker.root().to_owned();
        this.watch_tree(&root)?;
        if let Some(dir) = reflog_dir {
            match this.watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => this.reflog = Some(dir.join("HEAD")),
                // The counts then follow at the periodic reconcile, as without git.
                Err(e) => tracing::debug!(dir = %dir.display(), error = %e, "reflog not watched"),
            }
        }
        Ok(this)
    }

    /// How many directories are watched.
    pub fn watched(&self) -> usize {
        self.watched.len()
    }

    /// Adds a watch on every directory under `dir` not watched yet. Running out of watches is
    /// an error for the start, and a rescan (with the advice) later.
    fn watch_tree(&mut self, dir: &Path) -> Result<(), notify::Error> {
        for d in self.walker.directories(dir) {
            if self.watched.contains(&d) {
                continue;
            }
            match self.watcher.watch(&d, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(d);
                }
                Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                    return Err(e);
                }
                // Gone between the walk and the watch: nothing to watch.
                Err(e) => tracing::debug!(dir = %d.display(), error = %e, "not watched"),
            }
        }
        Ok(())
    }

    /// The next batch of changes; `None` when the OS watcher is gone.
    pub async fn next(&mut self) -> Option<Change> {
        loop {
            if let Some(reason) = self.root_gone.take() {
                return Some(Change::RootGone { reason });
            }
            if let Some(reason) = self.lost.take() {
                return Some(Change::Rescan { reason });
            }
            if std::mem::take(&mut self.history) {
                return Some(Change::History);
            }
            let first = self.events.recv().await?;
            let since = Instant::now();
            let mut paths = BTreeSet::new();
            let mut rescan = self.take(first, &mut paths);
            let deadline = since + self.max_delay;
            loop {
                let quiet = (Instant::now() + self.debounce).min(deadline);
                match tokio::time::timeout_at(quiet, self.events.recv()).await {
                    Ok(Some(signal)) => {
                        if let Some(r) = self.take(signal, &mut paths) {
                            rescan.get_or_insert(r);
                        }
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            if let Some(reason) = self.root_gone.take() {
                return Some(Change::RootGone { reason });
            }
            if self.overflowed.swap(false, Ordering::SeqCst) {
                rescan.get_or_insert_with(|| "more file events than the daemon could queue".into());
            }
            if let Some(reason) = rescan {
                // A reconcile reads the history too.
                self.history = false;
                return Some(Change::Rescan { reason });
            }
            if !paths.is_empty() {
                return Some(Change::Paths {
                    paths: paths.into_iter().collect(),
                    since,
                });
            }
        }
    }

    /// Keeps a reported path if the indexer may care; returns a reason to rescan if needed.
    fn take(&mut self, signal: Signal, paths: &mut BTreeSet<String>) -> Option<String> {
        let (path, gone) = match signal {
            Signal::Lost(reason) => return Some(reason),
            Signal::Path(p) => (p, false),
            Signal::Gone(p) => (p, true),
        };
        if self.reflog.as_ref() == Some(&path) {
            self.history = true;
            return None;
        }
        let rel = self.walker.rel(&path)?;
        if rel.is_empty() {
            // The root itself deleted or moved: its watches end with it, even when another
            // directory already stands under its name (with, often, the inode number just
            // freed, so only the event's kind tells).
            if gone || !path.is_dir() {
                self.root_gone.get_or_insert_with(|| {
                    if path.is_dir() {
                        "the root was replaced by another directory".to_owned()
                    } else {
                        "the root was deleted or moved away".to_owned()
                    }
                });
            }
            return None;
        }
        if self.walker.is_excluded(&rel) || !self.walker.is_in_scope(&rel) {
            return None;
        }
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if name == ".gitignore" || name == ".ignore" {
            // Which files are indexed may have changed anywhere below: walk again.
            return Some(format!("{rel} changed"));
        }
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                if !self.watched.contains(&path)
                    && let Err(e) = self.watch_tree(&path)
                {
                    self.lost = Some(format!("cannot watch {rel}: {e}; {INOTIFY_ADVICE}"));
                }
                paths.insert(rel);
            }
            Ok(_) => {
                if self.walker.is_included_name(&rel) {
                    paths.insert(rel);
                }
            }
            Err(_) => {
                // Gone: a file we may have indexed, or a directory we watched (with everything
                // under it; a directory made again under that name is watched afresh).
                let before = self.watched.len();
                self.watched.retain(|w| !w.starts_with(&path));
                if self.watched.len() < before || self.walker.is_included_name(&rel) {
                    paths.insert(rel);
                }
            }
        }
        None
    }
}
