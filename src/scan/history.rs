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
//! to every file it added or modified, except commits that touch more than
//! [`MAX_FILES_PER_COMMIT`] files (a reformat, a vendored copy, a licence header: they say
//! nothing about where work happens). Paths are relative to the root (`git log --relative`), so
//! a root that is a folder of a larger repository counts its own files only.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// A commit that touches more files than this is left out of the counts.
pub const MAX_FILES_PER_COMMIT: usize = 50;

/// One commit of a log: its id and the paths it added or modified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    pub paths: Vec<String>,
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
pub fn read(
    root: &Path,
    revision: &str,
    max_commits: usize,
) -> Result<Option<Vec<Commit>>, HistoryError> {
    let mut git = Command::new("git");
    git.arg("-C")
        .arg(root)
        // The daemon (or its container) often runs as another user than the one who owns the
        // checkout: reading its log is safe, and git would refuse it otherwise.
        .args(["-c", "safe.directory=*"])
        .arg("log")
        .arg("--relative");
    log(git, revision, max_commits, ".")
}

/// `git log` of `revision` through `git` (a command with the repository chosen and the
/// subcommand `log` given): its last `max_commits` commits that changed something under
/// `pathspec`, newest first.
pub fn log(
    mut git: Command,
    revision: &str,
    max_commits: usize,
    pathspec: &str,
) -> Result<Option<Vec<Commit>>, HistoryError> {
    git.args([
        // A user's `log.showSignature` would print signatures among the paths.
        "--no-show-signature",
        "--no-renames",
        "--diff-filter=AM",
        "--name-only",
        "--format=%x01%H",
        "-z",
    ])
    .arg(format!("--max-count={max_commits}"))
    .arg(revision)
    .arg("--")
    .arg(pathspec)
    .env("GIT_TERMINAL_PROMPT", "0")
    // Its messages in English, which the cases below are told apart by.
    .env("LC_ALL", "C")
    .stdin(std::process::Stdio::null());
    let out = match git.output() {
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

/// Parses `git log --format=%x01%H --name-only -z`: each commit is a field `\x01<id>`, then
/// its paths, each a field of its own (the first after a newline), fields ended by NUL. A path
/// cannot hold a NUL, and none starts with U+0001.
fn parse(out: &str) -> Vec<Commit> {
    let mut commits: Vec<Commit> = Vec::new();
    for field in out.split('\0') {
        let field = field.strip_prefix('\n').unwrap_or(field);
        if let Some(id) = field.strip_prefix('\u{1}') {
            commits.push(Commit {
                id: id.to_owned(),
                paths: Vec::new(),
            });
        } else if !field.is_empty()
            && let Some(c) = commits.last_mut()
        {
            c.paths.push(field.to_owned());
        }
    }
    commits
}

/// How many of `commits` changed each path, leaving out those that touch more than
/// [`MAX_FILES_PER_COMMIT`] files.
pub fn count(commits: &[Commit]) -> HashMap<String, f32> {
    let mut changes: HashMap<String, f32> = HashMap::new();
    for c in commits {
        if c.paths.len() > MAX_FILES_PER_COMMIT {
            continue;
        }
        for p in &c.paths {
            *changes.entry(p.clone()).or_default() += 1.0;
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
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

    fn commit(dir: &Path, files: &[(&str, &str)], message: &str) {
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().expect("has a parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", message]);
    }

    #[test]
    fn counts_the_commits_that_changed_each_file_of_the_root() {
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
            .expect("reads")
            .expect("a repository");
        // The deletion changed no file that is still there: not a commit of the counts.
        assert_eq!(commits.len(), 5, "{commits:?}");
        let changes = count(&commits);
        assert_eq!(changes.get("a.rs"), Some(&3.0));
        assert_eq!(changes.get("b.rs"), Some(&1.0));
        assert_eq!(changes.get("name with space.rs"), Some(&1.0));
        assert!(!changes.contains_key("c.rs") && !changes.contains_key("other/c.rs"));
        assert!(!changes.keys().any(|p| p.starts_with("gen/")));

        // The newest first, and only as many as asked.
        let last_two = read(repo, "HEAD", 2).expect("reads").expect("a repository");
        assert_eq!(last_two.len(), 2);
        assert_eq!(count(&last_two[1..]).get("svc/api/b.rs"), None);
        assert_eq!(last_two[0].paths.len(), MAX_FILES_PER_COMMIT + 2);
    }

    #[test]
    fn a_folder_outside_git_or_without_commits_or_git_has_no_history() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(
            read(tmp.path(), "HEAD", 10)
                .expect("not an error")
                .is_none()
        );
        git(tmp.path(), &["init", "-q"]);
        assert!(
            read(tmp.path(), "HEAD", 10)
                .expect("not an error")
                .is_none()
        );
        let missing = Command::new(tmp.path().join("no-such-git"));
        assert!(
            log(missing, "HEAD", 10, ".")
                .expect("not an error")
                .is_none()
        );
    }

    #[test]
    fn parses_commits_without_paths_and_paths_like_ids() {
        let (a, b, c) = ("a".repeat(40), "b".repeat(40), "c".repeat(40));
        let out = format!("\u{1}{a}\0\nsrc/x.rs\0{b}\0\u{1}{b}\0\u{1}{c}\0\nREADME\0");
        let commits = parse(&out);
        assert_eq!(commits.len(), 3, "{commits:?}");
        assert_eq!(commits[0].paths, vec!["src/x.rs".to_owned(), b.clone()]);
        assert!(commits[1].paths.is_empty());
        assert_eq!(
            (commits[2].id.as_str(), commits[2].paths.as_slice()),
            (c.as_str(), &["README".to_owned()][..])
        );
    }
}
