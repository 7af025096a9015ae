//! How often each file of a root changed in its git history: a prior for search.
//!
//! A task is a change, and changes land again and again in the same files: the files a project's
//! recent commits touched most are likelier to be the ones a new task touches (the "version
//! history" signal of IR-based bug localisation, Sisman and Kak 2012). Search adds it to a
//! candidate's fused score (`search.history_weight`); the counts are read here with the `git`
//! command (its log is the one interface to a repository that every install has, and it reads
//! packed, shallow and worktree repositories alike) and stored on each file's `indexed_files`
//! row by the indexer after every full reconcile.
//!
//! Counting: over the last `index.history_commits` commits that changed the root, each adds 1
//! to every file it added, modified or renamed, except commits that touch more than
//! [`MAX_FILES_PER_COMMIT`] files (a reformat, a vendored copy, a licence header: they say
//! nothing about where work happens). Paths are relative to the root (`git log --relative`), so
//! a root that is a folder of a larger repository counts its own files only.
//!
//! A file keeps its count when it moves: git's rename detection (`--find-renames`) pairs a
//! file's old path with its new one, and each change is credited to the name the file has in
//! the newest commit read, the tree being indexed (a project that moved `pkg/` to `src/pkg/`
//! keeps its history). Renames of commits left out for their size still apply. A file moved in
//! from outside a root that is a folder of a larger repository starts afresh (git sees an add),
//! and in a partial clone only files moved unchanged keep theirs (see [`log`]).
//!
//! Reading is async and cancel-safe: dropping the future (a timeout, a shutdown) kills the
//! `git` it runs, so a git that hangs (a stuck network filesystem, a huge rename search) costs
//! the caller only the time it chose to wait.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A commit that touches more files than this is left out of the counts.
pub const MAX_FILES_PER_COMMIT: usize = 50;

/// One commit of a log: its id, the paths it added, modified or renamed to, and its renames.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    /// The paths the commit left changed, by their names after it.
    pub paths: Vec<String>,
    /// `(from, to)`: the files it moved, by their names before and after it.
    pub renames: Vec<(String, String)>,
}

/// Why a root's history could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("git log failed: {0}")]
    Git(String),
}

/// The last `max_commits` commits of `revision` that changed files under `root` (in the
/// repository that holds it), newest first, with their paths relative to `root`. `None` when
/// `root` is not in a git repository, the revision does not exist yet (no commits), or there
/// is no `git` to run.
pub async fn read(
    root: &Path,
    revision: &str,
    max_commits: usize,
) -> Result<Option<Vec<Commit>>, HistoryError> {
    log(|| git_at(root), &["--relative"], revision, max_commits, ".").await
}

/// A `git` command (without its subcommand) run in the repository that holds `root`.
fn git_at(root: &Path) -> Command {
    let mut git = Command::new("git");
    git.arg("-C")
        .arg(root)
        // The daemon (or its container) often runs as another user than the one who owns the
        // checkout: reading its history is safe, and git would refuse it otherwise.
        .args(["-c", "safe.directory=*"]);
    git
}

/// The reflog directory of the repository that holds `root` (`<git dir>/logs`, whose `HEAD`
/// git appends to at every commit, checkout, merge, rebase or reset), if `root` is in one that
/// keeps reflogs: what a watcher watches to know that the history changed.
pub async fn reflog_dir(root: &Path) -> Option<PathBuf> {
    let mut git = git_at(root);
    git.args(["rev-parse", "--absolute-git-dir"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let out = output(git).await.ok().filter(|o| o.status.success())?;
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim_end_matches('\n'));
    let logs = dir.join("logs");
    logs.is_dir().then_some(logs)
}

/// The log of `revision` in the repository `repository()` chooses (a `git` command without its
/// subcommand): its last `max_commits` commits that changed something under `pathspec`, newest
/// first, with `log_args` given to `git log` (how to make paths relative). Renames are followed
/// by similarity (git's default, 50 %), except in a partial clone (`--filter=blob:none`) or a
/// repository whose old blobs cannot be read, where only files moved unchanged are: comparing
/// blobs that are not here would make git fetch each from the remote, from a daemon, at every
/// reconcile, or fail the whole log where the remote cannot be reached.
pub async fn log(
    repository: impl Fn() -> Command,
    log_args: &[&str],
    revision: &str,
    max_commits: usize,
    pathspec: &str,
) -> Result<Option<Vec<Commit>>, HistoryError> {
    let run = async |renames: &str| {
        let mut git = repository();
        git.arg("log").args(log_args).args([
            // A user's `log.showSignature` would print signatures among the paths.
            "--no-show-signature",
            renames,
            "--diff-filter=AMR",
            "--name-status",
            "--format=%x01%H",
            "-z",
        ]);
        git.arg(format!("--max-count={max_commits}"))
            .arg(revision)
            .arg("--")
            .arg(pathspec)
            // Never the network (git 2.44 and later; `is_partial_clone` keeps older ones off).
            .env("GIT_NO_LAZY_FETCH", "1");
        run_log(git).await
    };
    if is_partial_clone(repository()).await {
        return run("--find-renames=100%").await;
    }
    match run("--find-renames").await {
        // Blobs missing all the same (a repository made without them, or pruned): renames by
        // their blobs' ids need none.
        Err(HistoryError::Git(e)) => {
            tracing::debug!(error = %e, "git log with similar renames failed; exact renames only");
            run("--find-renames=100%").await
        }
        read => read,
    }
}

/// Whether `git` (a command choosing the repository) is a partial clone: a remote promises the
/// objects it lacks (`remote.<name>.promisor`, or `extensions.partialClone` by older git).
async fn is_partial_clone(mut git: Command) -> bool {
    git.args([
        "config",
        "--get-regexp",
        r"^(remote\..*\.promisor|extensions\.partialclone)$",
    ])
    .stdin(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    output(git).await.is_ok_and(|out| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_once(' '))
            .any(|(_, value)| !value.trim().eq_ignore_ascii_case("false"))
    })
}

/// Runs a `git log` with the output `parse` reads: `None` for the cases of [`read`] that have
/// no history.
async fn run_log(mut git: Command) -> Result<Option<Vec<Commit>>, HistoryError> {
    git.env("GIT_TERMINAL_PROMPT", "0")
        // Its messages in English, which the cases below are told apart by.
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null());
    let out = match output(git).await {
        Ok(out) => out,
        // No git on the PATH: no history to read, as for a folder outside git.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HistoryError::Spawn(e)),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Not a repository, or one without commits: no history, which is not an error.
        if stderr.contains("not a git repository")
            || stderr.contains("does not have any commits")
            || stderr.contains("unknown revision")
            || stderr.contains("bad revision")
        {
            return Ok(None);
        }
        return Err(HistoryError::Git(stderr.trim().to_owned()));
    }
    Ok(Some(parse(&String::from_utf8_lossy(&out.stdout))))
}

/// Runs `git` to its end and collects its output; killed if the future is dropped first.
async fn output(git: Command) -> std::io::Result<std::process::Output> {
    tokio::process::Command::from(git)
        .kill_on_drop(true)
        .output()
        .await
}

/// Parses `git log --format=%x01%H --name-status -z`: each commit is a field `\x01<id>`, then
/// its changes, each a status field (the first after a newline) followed by one path (`A`,
/// `M`) or two (`R<score>`: from, to), fields ended by NUL. The fields are read by position, so
/// a path that looks like a status or an id is still a path: a path cannot hold a NUL, and a
/// status field never starts with U+0001.
fn parse(out: &str) -> Vec<Commit> {
    let mut commits: Vec<Commit> = Vec::new();
    let mut fields = out.split('\0');
    while let Some(field) = fields.next() {
        let field = field.strip_prefix('\n').unwrap_or(field);
        if let Some(id) = field.strip_prefix('\u{1}') {
            commits.push(Commit {
                id: id.to_owned(),
                ..Commit::default()
            });
            continue;
        }
        let Some(c) = commits.last_mut() else {
            continue;
        };
        let (from, to) = match field.as_bytes().first() {
            None => continue,
            Some(b'R' | b'C') => (fields.next(), fields.next()),
            Some(_) => (None, fields.next()),
        };
        let Some(to) = to else {
            continue;
        };
        c.paths.push(to.to_owned());
        if field.starts_with('R')
            && let Some(from) = from
        {
            c.renames.push((from.to_owned(), to.to_owned()));
        }
    }
    commits
}

/// How many of the commits at `window` (positions in `commits`, newest first) changed each
/// file, leaving out those that touch more than [`MAX_FILES_PER_COMMIT`] files. Each change is
/// credited to the file's name in `commits[0]`, following the renames of every commit before
/// the window's end, counted or not.
pub fn count(commits: &[Commit], window: Range<usize>) -> HashMap<String, f32> {
    let mut changes: HashMap<String, f32> = HashMap::new();
    // An older commit's name of a file that moved since → its name now.
    let mut now: HashMap<String, String> = HashMap::new();
    for (i, c) in commits.iter().enumerate().take(window.end) {
        if window.contains(&i) && c.paths.len() <= MAX_FILES_PER_COMMIT {
            for p in &c.paths {
                let name = now.get(p).unwrap_or(p);
                *changes.entry(name.clone()).or_default() += 1.0;
            }
        }
        // Before this commit, `from` named the file that `to` names after it. All of a
        // commit's renames are read against the names after it (files can swap names).
        let moved: Vec<(String, String)> = c
            .renames
            .iter()
            .map(|(from, to)| (from.clone(), now.get(to).unwrap_or(to).clone()))
            .collect();
        now.extend(moved);
    }
    changes
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs git in `dir` (a test's repository), failing the test when it fails.
    pub(crate) fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Writes `files` into `dir` and commits them.
    pub(crate) fn commit(dir: &Path, files: &[(&str, &str)], message: &str) {
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().expect("has a parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", message]);
    }

    #[tokio::test]
    async fn counts_the_commits_that_changed_each_file_of_the_root() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path();
        git(repo, &["init", "-q"]);
        commit(
            repo,
            &[
                ("svc/api/a.rs", "1"),
                ("svc/api/b.rs", "1"),
                ("other/c.rs", "1"),
            ],
            "first",
        );
        commit(repo, &[("svc/api/a.rs", "2")], "second");
        commit(repo, &[("svc/api/a.rs", "3"), ("other/c.rs", "2")], "third");
        commit(repo, &[("svc/api/name with space.rs", "1")], "fourth");
        std::fs::remove_file(repo.join("svc/api/b.rs")).expect("rm");
        commit(repo, &[], "a deletion counts for nothing");
        // A commit over more files than the limit says nothing about where work happens.
        let many: Vec<(String, &str)> = (0..=MAX_FILES_PER_COMMIT)
            .map(|i| (format!("svc/api/gen/{i}.rs"), "x"))
            .chain([("svc/api/a.rs".to_owned(), "4")])
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        commit(repo, &many, "generated");

        let commits = read(&repo.join("svc/api"), "HEAD", 100)
            .await
            .expect("reads")
            .expect("a repository");
        // The deletion changed no file that is still there: not a commit of the counts.
        assert_eq!(commits.len(), 5, "{commits:?}");
        let changes = count(&commits, 0..commits.len());
        assert_eq!(changes.get("a.rs"), Some(&3.0));
        assert_eq!(changes.get("b.rs"), Some(&1.0));
        assert_eq!(changes.get("name with space.rs"), Some(&1.0));
        assert!(!changes.contains_key("c.rs") && !changes.contains_key("other/c.rs"));
        assert!(!changes.keys().any(|p| p.starts_with("gen/")));

        // The newest first, and only as many as asked.
        let last_two = read(repo, "HEAD", 2)
            .await
            .expect("reads")
            .expect("a repository");
        assert_eq!(last_two.len(), 2);
        assert_eq!(count(&last_two, 1..2).get("svc/api/b.rs"), None);
        assert_eq!(last_two[0].paths.len(), MAX_FILES_PER_COMMIT + 2);
    }

    #[tokio::test]
    async fn a_file_keeps_its_count_when_it_moves() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path();
        git(repo, &["init", "-q"]);
        let generated: Vec<(String, String)> = (0..=MAX_FILES_PER_COMMIT)
            .map(|i| (format!("pkg/gen/{i}.py"), format!("generated = {i}\n")))
            .collect();
        let generated: Vec<(&str, &str)> = generated
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        commit(repo, &generated, "vendored");
        commit(
            repo,
            &[
                ("pkg/a.py", "a = 1\n"),
                ("pkg/b.py", "b = 1\n"),
                ("outside/d.py", "d\n"),
            ],
            "first",
        );
        commit(repo, &[("pkg/a.py", "a = 2\n")], "second");
        // The project moves into src/: a commit over the limit, whose renames still apply.
        std::fs::create_dir_all(repo.join("src")).expect("mkdir");
        git(repo, &["mv", "pkg", "src/pkg"]);
        git(repo, &["commit", "-q", "-m", "move to src/"]);
        commit(repo, &[("src/pkg/a.py", "a = 3\n")], "third");
        git(repo, &["mv", "src/pkg/b.py", "src/pkg/c.py"]);
        // A file moved in from outside a folder root is new to it.
        git(repo, &["mv", "outside/d.py", "src/pkg/d.py"]);
        git(repo, &["commit", "-q", "-m", "b is c, d comes in"]);
        // A new file where a moved one was is another file.
        commit(repo, &[("src/pkg/b.py", "another b\n")], "a new b");

        let commits = read(repo, "HEAD", 100)
            .await
            .expect("reads")
            .expect("a repository");
        let all = count(&commits, 0..commits.len());
        assert_eq!(all.get("src/pkg/a.py"), Some(&3.0), "{all:?}");
        assert_eq!(all.get("src/pkg/c.py"), Some(&2.0), "{all:?}");
        assert_eq!(all.get("src/pkg/b.py"), Some(&1.0), "{all:?}");
        assert_eq!(all.get("src/pkg/d.py"), Some(&2.0), "{all:?}");
        assert!(all.keys().all(|p| !p.starts_with("pkg/")), "{all:?}");

        // Commits older than a window still name files as the newest commit does.
        let before_the_new_b = count(&commits, 1..commits.len());
        assert_eq!(before_the_new_b.get("src/pkg/b.py"), None);
        assert_eq!(before_the_new_b.get("src/pkg/c.py"), Some(&2.0));
        let before_the_move = count(&commits, 4..commits.len());
        assert_eq!(before_the_move.get("src/pkg/a.py"), Some(&2.0));
        assert_eq!(before_the_move.get("src/pkg/c.py"), Some(&1.0));

        let folder = read(&repo.join("src/pkg"), "HEAD", 100)
            .await
            .expect("reads")
            .expect("a repository");
        let folder = count(&folder, 0..folder.len());
        assert_eq!(
            folder.get("a.py"),
            Some(&1.0),
            "only since it came in: {folder:?}"
        );
        assert_eq!(folder.get("c.py"), Some(&1.0), "{folder:?}");
        assert_eq!(folder.get("d.py"), Some(&1.0), "{folder:?}");
    }

    #[tokio::test]
    async fn a_partial_clone_follows_exact_renames_without_its_remote() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let origin = tmp.path().join("origin");
        std::fs::create_dir(&origin).expect("mkdir");
        git(&origin, &["init", "-q"]);
        git(&origin, &["config", "uploadpack.allowFilter", "true"]);
        let text: String = (0..20).map(|i| format!("line {i}\n")).collect();
        commit(&origin, &[("a.py", &text), ("c.py", "c\n")], "first");
        // Moved and changed: a rename only by similarity, which compares the two blobs.
        std::fs::remove_file(origin.join("a.py")).expect("rm");
        commit(&origin, &[("b.py", &format!("{text}one more\n"))], "a is b");
        git(&origin, &["mv", "c.py", "d.py"]);
        git(&origin, &["commit", "-q", "-m", "c is d"]);
        let full = read(&origin, "HEAD", 10)
            .await
            .expect("reads")
            .expect("a repository");
        let full = count(&full, 0..full.len());
        assert_eq!(
            (full.get("b.py"), full.get("d.py")),
            (Some(&2.0), Some(&2.0))
        );

        let clone = tmp.path().join("clone");
        let url = format!("file://{}", origin.display());
        git(
            tmp.path(),
            &["clone", "-q", "--filter=blob:none", &url, "clone"],
        );
        // Its remote gone, a blob it lacks cannot be fetched: comparing a.py's with b.py's
        // would fail the whole log.
        std::fs::rename(&origin, tmp.path().join("gone")).expect("mv");
        let partial = read(&clone, "HEAD", 10)
            .await
            .expect("reads")
            .expect("a repository");
        let partial = count(&partial, 0..partial.len());
        assert_eq!(partial.get("d.py"), Some(&2.0), "{partial:?}");
        assert_eq!(partial.get("b.py"), Some(&1.0), "{partial:?}");
        // Not marked a partial clone, its blobs missing all the same: exact renames still.
        git(&clone, &["config", "--unset", "remote.origin.promisor"]);
        let unmarked = read(&clone, "HEAD", 10)
            .await
            .expect("reads")
            .expect("a repository");
        assert_eq!(count(&unmarked, 0..unmarked.len()), partial);
    }

    #[tokio::test]
    async fn a_folder_outside_git_or_without_commits_or_git_has_no_history() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(
            read(tmp.path(), "HEAD", 10)
                .await
                .expect("not an error")
                .is_none()
        );
        git(tmp.path(), &["init", "-q"]);
        assert!(
            read(tmp.path(), "HEAD", 10)
                .await
                .expect("not an error")
                .is_none()
        );
        let missing = || Command::new(tmp.path().join("no-such-git"));
        assert!(
            log(missing, &[], "HEAD", 10, ".")
                .await
                .expect("not an error")
                .is_none()
        );
    }

    #[tokio::test]
    async fn the_reflog_directory_is_the_repositorys_also_from_a_folder_of_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        git(&repo, &["init", "-q"]);
        // No commit yet, no reflog.
        assert_eq!(reflog_dir(&repo).await, None);
        commit(&repo, &[("svc/a.rs", "1")], "first");
        let logs = repo.canonicalize().expect("canonical").join(".git/logs");
        assert_eq!(reflog_dir(&repo).await, Some(logs.clone()));
        assert_eq!(reflog_dir(&repo.join("svc")).await, Some(logs));
        assert_eq!(reflog_dir(tmp.path()).await, None, "not a repository");
    }

    #[tokio::test]
    async fn a_git_that_hangs_is_killed_when_the_caller_stops_waiting() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let pid_file = tmp.path().join("pid");
        // A "git" that never answers (git's own arguments land in $0, $1, …).
        let hanging = || {
            let mut sh = Command::new("sh");
            sh.args(["-c", r#"echo $$ >> "$PID_FILE"; exec sleep 600"#])
                .env("PID_FILE", &pid_file);
            sh
        };
        let waited = tokio::time::timeout(
            std::time::Duration::from_millis(500),
            log(hanging, &[], "HEAD", 10, "."),
        )
        .await;
        assert!(waited.is_err(), "still waiting on git: {waited:?}");
        let pids = std::fs::read_to_string(&pid_file).expect("git ran");
        let pid = pids.lines().last().expect("a pid").trim();
        // Killed: gone, or a zombie until the runtime reaps it.
        let state = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest[..1].to_owned()))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while state().is_some_and(|s| s != "Z") && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(
            state().is_none_or(|s| s == "Z"),
            "git {pid} still running: {:?}",
            state()
        );
    }

    #[test]
    fn parses_commits_without_paths_and_paths_like_ids() {
        let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let out = format!(
            "\u{1}{a}\0\nM\0src/x.rs\0A\0{b}\0R087\0M\0R100\0\u{1}{b}\0\u{1}{c}\0\nA\0README\0"
        );
        let commits = parse(&out);
        assert_eq!(commits.len(), 3, "{commits:?}");
        assert_eq!(
            commits[0].paths,
            vec!["src/x.rs".to_owned(), b.clone(), "R100".to_owned()]
        );
        assert_eq!(
            commits[0].renames,
            vec![("M".to_owned(), "R100".to_owned())]
        );
        assert!(commits[1].paths.is_empty());
        assert_eq!(
            (commits[2].id.as_str(), commits[2].paths.as_slice()),
            (c.as_str(), &["README".to_owned()][..])
        );
    }
}
