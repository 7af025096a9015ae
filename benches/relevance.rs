//! Relevance on real code: Recall@5, Recall@10 and MRR@10 at file level for lexical, vector
//! and hybrid search, next to a plain file-level BM25 baseline. Run with
//! `scripts/bench.sh relevance` (it starts the services); the queries and their labels are in
//! `benches/relevance/*.toml`, chosen by `RELEVANCE_SETS` (default `queries,commits`):
//! `queries` (intent queries written for small packages), `commits` (commit subjects over whole
//! repositories, read while choosing the defaults), `validation` (the same from eight other
//! repositories, only ever scored), `long` (whole commit messages, subject and body, over the
//! corpora of `commits` and `validation`, which must run with it), `subjects` (1,864 more
//! commit subjects over the same corpora, none of the other sets' commits, only ever scored;
//! it runs with them too), `large` (commit subjects over two repositories of thousands of
//! files, only ever scored), `large-subjects` (240 more over the same two, none of
//! `large`'s commits, only ever scored; it runs with `large`) and `outline` (commit subjects
//! over PHP, Kotlin and Elixir repositories, only ever scored), `languages` (commit subjects
//! over Kotlin, Java, Dart and Swift repositories, only ever scored), `moved` (commit subjects over
//! four of `commits`' and `validation`'s repositories, labelled with the files they changed
//! that have moved since, by their names in the snapshot, which the other sets leave out; only
//! ever scored) and `train` (commit subjects
//! over twelve other repositories, which `scripts/train-query-map.py` learns the query map
//! from: its figures are the map's training data, not a test of it). All the sets run share one
//! workspace, so its BM25 statistics, and the figures, depend on which sets are run together.
//! With `long`, the context pre-fetch is scored too: each long query as a task, the share of
//! its changed files, and of its changed definitions (read from the commit in the repository's
//! history), in the block, and the same definitions among search's ten results, for the long
//! queries and the commit subjects.
//!
//! A query from a commit (`source = "commit …"`) is searched with the change counts of the
//! `index.history_commits` commits before its own (`search.history_weight`), as the daemon would
//! have had them when its author began the change, and so is the same commit as a task of the
//! context pre-fetch; other queries with their snapshot's. The snapshot's own counts would hold
//! the very commit that answers the query.
//!
//! The corpora are indexed incrementally into the database given by `DATABASE_URL` (one
//! repository per corpus), so a second run re-uses the vectors and takes seconds. They go to
//! the workspace `CODESEARCH_WORKSPACE` names (default `default`): `large`, `outline`,
//! `languages` and `train` run in ones of their own (`CODESEARCH_WORKSPACE=large RELEVANCE_SETS=large`), so
//! that their corpora leave the other sets' statistics alone; the bench warns when the
//! workspace holds repositories no set of the run searches. The embedder is the configured one (`CODESEARCH_EMBEDDER`,
//! default `auto`: the local model here). The database is the bench's alone: a daemon started
//! on it (`DATABASE_URL=…/codesearch_relevance codesearch serve`) indexes its working directory
//! into the same workspace and changes every figure.
//!
//! `RELEVANCE_SHOW=text` prints, for each query containing `text` (`*`: every query), hybrid's top 10 with the
//! score parts and the baseline's ranking: for reading a ranking, not for tuning to it.
//!
//! After the tables by kind of query, #19's check repository by repository (every set's
//! queries from that repository's history pooled): with the labels as written, and again with
//! the tests and changelogs each commit changed as labels too, which the sets leave out.
//!
//! `RELEVANCE_RANKINGS=FILE` writes every mode's ranked files for every query to FILE (tab-separated);
//! `RELEVANCE_LIMIT=N` makes every search N results deep (the figures still read the first ten),
//! for studying a re-ranking offline.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use codesearch::chunk::{ChunkOptions, chunk_file};
use codesearch::config::Config;
use codesearch::context::{ContextRequest, ContextService};
use codesearch::daemon;
use codesearch::pipeline::Indexer;
use codesearch::repository::Repository;
use codesearch::scan::{Classifier, Walker, history};
use codesearch::search::{RawSearch, SearchRequest, SearchService, is_changelog};
use codesearch::store::{Origin, Store};
use codesearch::text::words;
use common::registry_crate;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize)]
struct Labels {
    /// A set may search corpora that another set declares (`long.toml`).
    #[serde(default)]
    corpus: Vec<Corpus>,
    query: Vec<Query>,
}

#[derive(Deserialize)]
struct Corpus {
    name: String,
    #[serde(default)]
    paths: Vec<PathBuf>,
    /// A crate in the local cargo registry, by name prefix (newest version wins).
    #[serde(default)]
    registry_crate: Option<String>,
    /// A git repository and the commit searched: checked out under `.codesearch/corpora/`.
    #[serde(default)]
    git: Option<String>,
    #[serde(default)]
    commit: Option<String>,
    /// For a corpus that is not a git snapshot (a package): its project's history, whose
    /// change counts its queries are searched with.
    #[serde(default)]
    history: Option<CorpusHistory>,
    /// Written after the defaults were chosen, to check that they generalise.
    #[serde(default)]
    held_out: bool,
    /// Which file the corpus came from (set when loading): the report sums by it.
    #[serde(skip)]
    set: String,
}

/// A package corpus's project history: the repository, the revision the package was
/// released from, and the package's folder in it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusHistory {
    git: String,
    revision: String,
    #[serde(default)]
    path: String,
}

#[derive(Deserialize)]
struct Query {
    corpus: String,
    query: String,
    relevant: Vec<String>,
    /// An identifier or error string as pasted, rather than a description.
    #[serde(default)]
    exact: bool,
    /// Where the query and its labels came from (`commit <hash>`): the context pre-fetch's
    /// score reads the commit's changes.
    #[serde(default)]
    source: Option<String>,
    /// Which file the query came from (set when loading).
    #[serde(skip)]
    set: String,
}

impl Query {
    /// A whole commit message (`long.toml`, `languages-long.toml`): timed apart from short
    /// queries, and a task for the context pre-fetch.
    fn is_long(&self) -> bool {
        self.set == "long" || self.set.ends_with("-long")
    }
}

/// Sums of the per-query figures.
#[derive(Default, Clone, Copy)]
struct Score {
    r5: f64,
    r10: f64,
    mrr: f64,
    n: usize,
}

impl Score {
    fn add(&mut self, ranked: &[String], relevant: &[String]) {
        let rel: HashSet<&str> = relevant.iter().map(String::as_str).collect();
        let found = |k: usize| {
            ranked
                .iter()
                .take(k)
                .filter(|p| rel.contains(p.as_str()))
                .count() as f64
                / rel.len() as f64
        };
        self.r5 += found(5);
        self.r10 += found(10);
        self.mrr += ranked
            .iter()
            .take(10)
            .position(|p| rel.contains(p.as_str()))
            .map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
        self.n += 1;
    }

    fn merge(&mut self, o: Score) {
        self.r5 += o.r5;
        self.r10 += o.r10;
        self.mrr += o.mrr;
        self.n += o.n;
    }

    fn row(&self, name: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "  {name:<10} {:>6.3} {:>6.3} {:>6.3}",
            self.r5 / n,
            self.r10 / n,
            self.mrr / n
        )
    }
}

const MODES: [&str; 3] = ["lexical", "vector", "hybrid"];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let labels = load_sets()?;
    let cfg = Config::from_env(None, &[])?;
    let (store, embedder) = daemon::open(&cfg).await?;
    println!("embedder: {}", embedder.model_id());

    let mut roots: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for c in &labels.corpus {
        let mut paths = c.paths.clone();
        if let Some(prefix) = &c.registry_crate {
            paths.extend(registry_crate(prefix));
        }
        if let (Some(url), Some(commit)) = (&c.git, &c.commit) {
            paths.push(checkout(&c.name, url, commit)?);
        }
        paths.retain(|p| p.is_dir());
        if paths.is_empty() {
            println!("corpus {}: not on this machine, skipped", c.name);
            continue;
        }
        let mut icfg = cfg.index.clone();
        icfg.repository = c.name.clone();
        let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), icfg.clone())?;
        for p in &paths {
            let started = Instant::now();
            let repo = Repository::new(
                &c.name,
                p,
                &cfg.workspaces.default,
                Origin::Local,
                icfg.clone(),
            )?;
            let r = indexer
                .index_repository(&repo, None, &CancellationToken::new())
                .await?;
            println!(
                "corpus {}: {} ({} files indexed, {} unchanged, {} chunks embedded, {:.0}s)",
                c.name,
                p.display(),
                r.indexed,
                r.unchanged,
                r.embedded,
                started.elapsed().as_secs_f64()
            );
        }
        roots.insert(c.name.clone(), paths);
    }
    // Other repositories in the workspace weigh in every query's BM25 statistics: a set run
    // once in the default workspace changes every later run's figures (the outline set did,
    // by up to 0.006 R@10 a repository).
    let others: Vec<String> = store
        .repositories(Some(&cfg.workspaces.default))
        .await?
        .into_iter()
        .map(|r| r.name)
        .filter(|name| !roots.contains_key(name))
        .collect();
    if !others.is_empty() {
        println!(
            "warning: the workspace {:?} also holds {}, which no set of this run searches: their \
             words change the BM25 statistics and every figure below. Run their sets in a \
             workspace of their own (CODESEARCH_WORKSPACE=name), which moves them there.",
            cfg.workspaces.default,
            others.join(", ")
        );
    }
    store.ensure_ann_index().await?;
    store.vacuum_analyze().await?;

    let show = std::env::var("RELEVANCE_SHOW")
        .ok()
        .filter(|s| !s.is_empty());
    let mut search_cfg = cfg.search.clone();
    search_cfg.result_cache_entries = 0;
    let service = SearchService::new(store.clone(), Arc::clone(&embedder), search_cfg.clone())
        .with_default_workspace(&cfg.workspaces.default);

    // `RELEVANCE_RANKINGS=FILE` writes each mode's ranked files per query (mode, corpus,
    // query, files), for reading where one mode finds what another misses.
    let mut dump = match std::env::var("RELEVANCE_RANKINGS") {
        Ok(path) if !path.is_empty() => Some(std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("creating {path}"))?,
        )),
        _ => None,
    };
    let histories = Histories::read(&labels, &roots, &store, cfg.index.history_commits).await?;
    let limit: i64 = std::env::var("RELEVANCE_LIMIT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let mut per_corpus: Vec<(String, [Score; 4])> = Vec::new();
    // The same figures by kind of query: (name, scores).
    let mut groups: Vec<(&str, [Score; 4])> = [
        "tuning",
        "held out",
        "exact",
        "commits",
        "validation",
        "long, commits' repositories",
        "long, validation's repositories",
        "large",
        "subjects",
        "large subjects",
        "moved",
    ]
    .into_iter()
    .map(|g| (g, [Score::default(); 4]))
    .collect();
    let mut misses: Vec<String> = Vec::new();
    // Every query's rankings (lexical, vector, hybrid, bm25-file), for the per-repository report.
    let mut outcomes: Vec<Outcome<'_>> = Vec::new();
    // Hybrid search's time (the query embedding included), short queries and long ones.
    let mut latencies: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    // Queries where hybrid ranks the first relevant file below the baseline.
    let mut behind: Vec<String> = Vec::new();
    for c in &labels.corpus {
        let Some(paths) = roots.get(&c.name) else {
            continue;
        };
        let bm25 = FileBm25::build(paths, &cfg)?;
        let indexed: Arc<HashSet<String>> = Arc::new(bm25.paths().map(str::to_owned).collect());
        // One row per set that searches this corpus: its own, then the others (`long`).
        let mut scores: Vec<(String, [Score; 4])> = Vec::new();
        for q in labels.query.iter().filter(|q| q.corpus == c.name) {
            let hybrid_ms = latencies
                .entry(if q.is_long() { "long" } else { "short" })
                .or_default();
            let row = if q.set == c.set {
                c.name.clone()
            } else {
                format!("{} ({})", c.name, q.set)
            };
            let scores = match scores.iter().position(|(r, _)| *r == row) {
                Some(i) => &mut scores[i].1,
                None => {
                    scores.push((row, [Score::default(); 4]));
                    &mut scores.last_mut().expect("just pushed").1
                }
            };
            histories.set_for(q).await?;
            let mut hybrid_ranked = Vec::new();
            let mut ranked_by_mode: Vec<Vec<String>> = Vec::new();
            for (m, mode) in MODES.iter().enumerate() {
                let req = SearchRequest::new(
                    RawSearch {
                        mode: Some((*mode).into()),
                        limit: Some(limit),
                        repository: Some(c.name.clone()),
                        ..RawSearch::query(q.query.clone())
                    },
                    &search_cfg,
                )?;
                let started = Instant::now();
                let out = service.search(&req).await?;
                if *mode == "hybrid" {
                    hybrid_ms.push(started.elapsed().as_secs_f64() * 1000.0);
                }
                if *mode == "hybrid"
                    && let Some(s) = &show
                    && (s == "*" || q.query.contains(s.as_str()))
                {
                    println!("\n[{}] {:?} (relevant: {:?})", c.name, q.query, q.relevant);
                    for h in out.hits.iter().take(10) {
                        println!(
                            "  {} {:.3}  cos {:.3}  file-bm25 {:>6}  {}:{} {}",
                            if q.relevant.contains(&h.hit.file_path) {
                                '*'
                            } else {
                                ' '
                            },
                            h.score,
                            h.hit.similarity.unwrap_or(f64::NAN),
                            h.file_lexical.map_or("-".into(), |f| format!("{f:.2}")),
                            h.hit.file_path,
                            h.hit.start_line.unwrap_or(0),
                            h.hit.symbol.as_deref().unwrap_or("")
                        );
                    }
                    println!("  bm25-file: {:?}", bm25.rank(&q.query, 5));
                }
                let mut seen = HashSet::new();
                let ranked: Vec<String> = out
                    .hits
                    .into_iter()
                    .map(|h| h.hit.file_path)
                    .filter(|p| seen.insert(p.clone()))
                    .collect();
                scores[m].add(&ranked, &q.relevant);
                if let Some(dump) = &mut dump {
                    use std::io::Write;
                    writeln!(
                        dump,
                        "{mode}\t{}\t{}\t{}",
                        c.name,
                        q.query,
                        ranked.join(" ")
                    )?;
                }
                ranked_by_mode.push(ranked.clone());
                if *mode == "hybrid" {
                    hybrid_ranked = ranked.clone();
                }
                if *mode == "hybrid" && !ranked.iter().take(5).any(|p| q.relevant.contains(p)) {
                    misses.push(format!(
                        "  [{}] {:?}: wanted {:?}, got {:?}",
                        c.name,
                        q.query,
                        q.relevant,
                        &ranked[..ranked.len().min(5)]
                    ));
                }
            }
            let baseline = bm25.rank(&q.query, 10);
            if let Some(dump) = &mut dump {
                use std::io::Write;
                writeln!(
                    dump,
                    "bm25-file\t{}\t{}\t{}",
                    c.name,
                    q.query,
                    baseline.join(" ")
                )?;
            }
            scores[3].add(&baseline, &q.relevant);
            let group = match (q.exact, c.held_out) {
                _ if q.set == "long" && c.set == "validation" => 6,
                _ if q.set == "long" => 5,
                _ if q.set == "subjects" => 8,
                _ if q.set == "large-subjects" => 9,
                _ if c.set == "moved" => 10,
                _ if c.set == "commits" => 3,
                _ if c.set == "validation" => 4,
                _ if c.set == "large" => 7,
                (true, _) => 2,
                (false, true) => 1,
                (false, false) => 0,
            };
            for (m, ranked) in ranked_by_mode.iter().enumerate() {
                groups[group].1[m].add(ranked, &q.relevant);
            }
            groups[group].1[3].add(&baseline, &q.relevant);
            outcomes.push(Outcome {
                query: q,
                indexed: Arc::clone(&indexed),
                ranked: [
                    ranked_by_mode[0].clone(),
                    ranked_by_mode[1].clone(),
                    ranked_by_mode[2].clone(),
                    baseline.clone(),
                ],
            });
            let first = |ranked: &[String]| ranked.iter().position(|p| q.relevant.contains(p));
            if let (Some(b), h) = (first(&baseline), first(&hybrid_ranked))
                && h.is_none_or(|h| h > b)
            {
                behind.push(format!(
                    "  [{}] {:?}: first relevant at {} (bm25-file: {})",
                    c.name,
                    q.query,
                    h.map_or("none".into(), |h| (h + 1).to_string()),
                    b + 1
                ));
            }
        }
        per_corpus.extend(scores);
    }

    println!("\nfile-level relevance, limit 10 (R@5, R@10, MRR@10)");
    let mut total = [Score::default(); 4];
    for (name, scores) in &per_corpus {
        print_table(name, scores);
        for (t, s) in total.iter_mut().zip(scores) {
            t.merge(*s);
        }
    }
    print_table("all", &total);
    println!(
        "\nby kind of query: tuning (intent queries the defaults were chosen on), held out (intent queries on corpora written after), exact (identifiers and error strings), commits (commit subjects over whole repositories, commits.toml), validation (the same from eight other repositories, validation.toml), long (whole commit messages over either's repositories, long.toml), large (commit subjects over two repositories of thousands of files, large.toml), subjects (more commit subjects over the commit and validation sets' repositories, subjects.toml), large subjects (more commit subjects over the large set's repositories, large-subjects.toml), moved (commit subjects labelled with the files they changed that moved since, by their names now, moved.toml)"
    );
    for (name, scores) in groups.iter().filter(|(_, s)| s[0].n > 0) {
        print_table(name, scores);
    }
    print_per_repository(
        "per repository, queries from its history (every set run pooled), labels as written:",
        &outcomes,
        |o| Some(o.query.relevant.clone()),
    );
    let also = tests_and_changelogs_changed(&labels, &outcomes, &cfg)?;
    print_per_repository(
        &format!(
            "the same, with the tests and changelogs each commit changed as labels too ({} files \
             over {} of {} commits):",
            also.values().map(Vec::len).sum::<usize>(),
            also.values().filter(|files| !files.is_empty()).count(),
            also.len()
        ),
        &outcomes,
        |o| {
            let mut rel = o.query.relevant.clone();
            if let Some(more) = o.query.source.as_deref().and_then(|s| also.get(s)) {
                rel.extend(more.iter().cloned());
            }
            rel.sort();
            rel.dedup();
            Some(rel)
        },
    );
    println!(
        "\nhybrid search time, query embedding included, one at a time, no result cache (this \
         database, {} chunks; not the scale benchmark):",
        store.chunk_count_estimate().await?
    );
    for (kind, ms) in &mut latencies {
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
        println!(
            "  {kind:<6} {:>5} queries  p50 {:>6.2} ms  p95 {:>6.2} ms",
            ms.len(),
            at(0.5),
            at(0.95)
        );
    }
    changed_code(&labels, &roots, &service, &histories, &cfg).await?;
    if !behind.is_empty() {
        println!("\nhybrid behind bm25-file:");
        for b in behind {
            println!("{b}");
        }
    }
    if !misses.is_empty() {
        println!("\nhybrid misses (no relevant file in the top 5):");
        for m in misses {
            println!("{m}");
        }
    }
    Ok(())
}

/// The context pre-fetch with the long queries as tasks: a whole commit message reads like a
/// ticket, and what the commit changed is what the task needs. For the block as served, for
/// one or three chunks per file instead of two, and for a block filled from a plain keyword
/// search (as the context benchmark does for its tickets), prints:
/// - the share of the commit's changed files that are in the block (the default budget);
/// - the share of its changed definitions whose code is ([`changed_of`]). Files whose changed
///   definitions have no name, or no longer exist, are left out of this share, and so are
///   commits without any left.
///
/// Then the same definitions among search's ten results, for the long queries and for the
/// commit subjects ([`shown_by_search`]).
async fn changed_code(
    labels: &Labels,
    roots: &HashMap<String, Vec<PathBuf>>,
    search: &SearchService,
    histories: &Histories<'_>,
    cfg: &Config,
) -> anyhow::Result<()> {
    let of_sets = |keep: &dyn Fn(&Query) -> bool| -> Vec<&Query> {
        labels
            .query
            .iter()
            .filter(|q| keep(q) && roots.contains_key(&q.corpus))
            .collect()
    };
    let tasks = of_sets(&Query::is_long);
    if tasks.is_empty() {
        return Ok(());
    }
    let opts = ChunkOptions {
        max_chars: cfg.index.max_chunk_chars,
        overlap_chars: cfg.index.chunk_overlap_chars,
        min_chars: cfg.index.min_chunk_chars,
        parse_timeout: std::time::Duration::from_millis(cfg.index.parse_timeout_ms),
    };
    let changed = changed_of(labels, roots, &tasks, &opts)?;
    let context = ContextService::new(search.clone(), cfg.context.clone());
    let variants = [
        ("hybrid, as served", "hybrid", None),
        ("hybrid, 1 chunk per file", "hybrid", Some(1)),
        ("hybrid, 3 chunks per file", "hybrid", Some(3)),
        ("keyword search only", "lexical", None),
    ];
    let scored = changed.iter().filter(|c| !c.is_empty()).count();
    let definitions: usize = changed.iter().flat_map(|c| c.values()).map(Vec::len).sum();
    let n = tasks.len();
    println!(
        "\ncontext pre-fetch, the {n} long queries as tasks, {}-token blocks: share of the \
         changed files in the block, tasks with all of them; share of the changed definitions \
         ({definitions} over {scored} tasks), tasks with all of them",
        cfg.context.budget_tokens
    );
    // Per repository: each variant's share of the changed files in the block.
    let mut by_repository: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (v, (name, mode, per_file)) in variants.into_iter().enumerate() {
        let (mut files_share, mut files_whole) = (0.0, 0);
        let (mut defs_share, mut defs_whole) = (0.0, 0);
        for (q, defs) in tasks.iter().zip(&changed) {
            histories.set_for(q).await?;
            let block = context
                .build(ContextRequest {
                    task: q.query.clone(),
                    repository: Some(q.corpus.clone()),
                    mode: Some(mode.to_owned()),
                    per_file,
                    ..ContextRequest::default()
                })
                .await?;
            let mut in_block: HashMap<&str, Vec<(u32, u32)>> = HashMap::new();
            for f in &block.files {
                in_block
                    .entry(f.file_path.as_str())
                    .or_default()
                    .extend(&f.ranges);
            }
            let found = q
                .relevant
                .iter()
                .filter(|r| in_block.contains_key(r.as_str()))
                .count();
            let share = found as f64 / q.relevant.len() as f64;
            files_share += share;
            files_whole += usize::from(found == q.relevant.len());
            let row = by_repository.entry(q.corpus.as_str()).or_default();
            row.resize(variants.len() + 1, 0.0);
            row[v] += share;
            row[variants.len()] += f64::from(u8::from(v == 0));
            if !defs.is_empty() {
                let (held, all) = held_of(defs, |path, s, e| {
                    in_block
                        .get(path)
                        .is_some_and(|r| r.iter().any(|(a, b)| *a <= e && s <= *b))
                });
                defs_share += held as f64 / all as f64;
                defs_whole += usize::from(held == all);
            }
        }
        println!(
            "  {name:<28} files {:.3} ({files_whole}/{n})   definitions {:.3} ({defs_whole}/{scored})",
            files_share / n as f64,
            defs_share / scored.max(1) as f64,
        );
    }
    println!("  per repository, share of the changed files in the block:");
    for (repository, row) in &by_repository {
        let tasks = row[variants.len()];
        let shares: Vec<String> = variants
            .iter()
            .zip(row)
            .map(|((name, ..), sum)| format!("{name} {:.3}", sum / tasks))
            .collect();
        println!("    {repository} ({tasks} tasks): {}", shares.join(", "));
    }
    println!(
        "\nsearch, 10 results: share of the changed definitions among the chunks shown; hybrid \
         time with the query vectors cached"
    );
    shown_by_search("long queries", &tasks, &changed, search, histories).await?;
    let subjects = of_sets(&|q| ["commits", "validation", "languages"].contains(&q.set.as_str()));
    let changed = changed_of(labels, roots, &subjects, &opts)?;
    shown_by_search("commit subjects", &subjects, &changed, search, histories).await?;
    Ok(())
}

/// Per query and changed file, the definitions its commit changed there, each as the line
/// ranges of its chunks in the file as searched ([`changed_definitions`]); empty for a query
/// that names no commit, or whose repository has no history here.
fn changed_of<'a>(
    labels: &Labels,
    roots: &HashMap<String, Vec<PathBuf>>,
    queries: &[&'a Query],
    opts: &ChunkOptions,
) -> anyhow::Result<Vec<HashMap<&'a str, Vec<Lines>>>> {
    let mut changed = Vec::new();
    for q in queries {
        let git_dir = history_of(labels, &q.corpus)?;
        let commit = q.source.as_deref().and_then(|s| s.strip_prefix("commit "));
        let root = roots.get(&q.corpus).and_then(|p| p.first());
        let mut files = HashMap::new();
        if let (Some(git_dir), Some(commit), Some(root)) = (git_dir, commit, root) {
            for path in &q.relevant {
                let ranges = changed_definitions(&git_dir, commit, path, root, opts);
                if !ranges.is_empty() {
                    files.insert(path.as_str(), ranges);
                }
            }
        }
        changed.push(files);
    }
    Ok(changed)
}

/// How many of `defs`' definitions have a chunk that `shown(path, start, end)` overlaps, and
/// how many there are.
fn held_of(
    defs: &HashMap<&str, Vec<Lines>>,
    shown: impl Fn(&str, u32, u32) -> bool,
) -> (usize, usize) {
    defs.iter().fold((0, 0), |(held, all), (path, wanted)| {
        let here = wanted
            .iter()
            .filter(|chunks| chunks.iter().any(|&(s, e)| shown(path, s, e)))
            .count();
        (held + here, all + wanted.len())
    })
}

/// The changed definitions among search's ten results (one chunk per file), with each file
/// shown by its chunk most like the query, or by its chunks picked by the query's words too
/// (as served); and what each costs.
async fn shown_by_search(
    name: &str,
    queries: &[&Query],
    changed: &[HashMap<&str, Vec<Lines>>],
    search: &SearchService,
    histories: &Histories<'_>,
) -> anyhow::Result<()> {
    let scored = changed.iter().filter(|c| !c.is_empty()).count();
    for by_words in [false, true] {
        let (mut share, mut ms) = (0.0, Vec::new());
        for (q, defs) in queries.iter().zip(changed) {
            let mut req = SearchRequest::new(
                RawSearch {
                    limit: Some(10),
                    repository: Some(q.corpus.clone()),
                    ..RawSearch::query(q.query.clone())
                },
                search.config(),
            )?;
            req.chunks_by_words = by_words;
            histories.set_for(q).await?;
            let started = Instant::now();
            let out = search.search(&req).await?;
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
            if defs.is_empty() {
                continue;
            }
            let (held, all) = held_of(defs, |path, s, e| {
                out.hits.iter().any(|h| {
                    h.hit.file_path == path
                        && h.hit.start_line.unwrap_or(0) as u32 <= e
                        && s <= h.hit.end_line.unwrap_or(0) as u32
                })
            });
            share += held as f64 / all as f64;
        }
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
        println!(
            "  {name:<16} {:<27} definitions {:.3} ({scored} queries)   p50 {:.2} ms  p95 {:.2} ms",
            if by_words {
                "as served (words too)"
            } else {
                "vector's pick alone"
            },
            share / scored.max(1) as f64,
            at(0.5),
            at(0.95)
        );
    }
    Ok(())
}

/// Line ranges of a file, 1-based and inclusive.
type Lines = Vec<(u32, u32)>;

/// The definitions (and sections) that `commit` changed in `path`, each as the line ranges of
/// its chunks in `root`'s copy of the file: the names of the chunks its hunks touch in the file
/// as the commit left it, looked up among the chunks of the file as searched. Empty when the
/// commit has no parent, or the file is not at the commit, or nothing it changed has a name
/// that is still there.
fn changed_definitions(
    git_dir: &std::path::Path,
    commit: &str,
    path: &str,
    root: &std::path::Path,
    opts: &ChunkOptions,
) -> Vec<Lines> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let parent = format!("{commit}^");
    let Some(diff) = git(&["diff", "-U0", "--no-color", &parent, commit, "--", path]) else {
        return Vec::new();
    };
    let Some(then) = git(&["show", &format!("{commit}:{path}")]) else {
        return Vec::new();
    };
    let Ok(now) = std::fs::read_to_string(root.join(path)) else {
        return Vec::new();
    };
    // `@@ -a,b +c,d @@`: the new side's lines c..c+d-1; a deletion (d = 0) sits between c
    // and c+1.
    let hunks: Vec<(u32, u32)> = diff
        .lines()
        .filter_map(|l| {
            let new = l
                .strip_prefix("@@ ")?
                .split(' ')
                .nth(1)?
                .strip_prefix('+')?;
            let (start, count) = match new.split_once(',') {
                Some((s, c)) => (s.parse::<u32>().ok()?, c.parse::<u32>().ok()?),
                None => (new.parse::<u32>().ok()?, 1),
            };
            Some(if count == 0 {
                (start.max(1), start + 1)
            } else {
                (start, start + count - 1)
            })
        })
        .collect();
    let names = |c: &codesearch::chunk::Chunk| -> Vec<String> {
        c.symbol.iter().chain(&c.defines).cloned().collect()
    };
    let wanted: HashSet<String> = chunk_file(path, &then, opts)
        .iter()
        .filter(|c| {
            hunks
                .iter()
                .any(|(s, e)| c.start_line <= *e && *s <= c.end_line)
        })
        .flat_map(names)
        .collect();
    let mut found: std::collections::BTreeMap<String, Lines> = Default::default();
    for c in chunk_file(path, &now, opts) {
        for name in names(&c).into_iter().filter(|n| wanted.contains(n)) {
            found
                .entry(name)
                .or_default()
                .push((c.start_line, c.end_line));
        }
    }
    found.into_values().collect()
}

/// The label sets named by `RELEVANCE_SETS` (default `queries,commits`), each
/// `benches/relevance/<set>.toml`, as one list.
fn load_sets() -> anyhow::Result<Labels> {
    let names = std::env::var("RELEVANCE_SETS").unwrap_or_else(|_| "queries,commits".into());
    let mut all = Labels {
        corpus: Vec::new(),
        query: Vec::new(),
    };
    for set in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let path = format!(
            "{}/benches/relevance/{set}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let mut labels: Labels = toml::from_str(&text).with_context(|| format!("in {path}"))?;
        for c in &mut labels.corpus {
            c.set = set.to_owned();
        }
        for q in &mut labels.query {
            q.set = set.to_owned();
        }
        all.corpus.append(&mut labels.corpus);
        all.query.append(&mut labels.query);
    }
    if let Some(q) = all
        .query
        .iter()
        .find(|q| !all.corpus.iter().any(|c| c.name == q.corpus))
    {
        anyhow::bail!(
            "set `{}` searches corpus `{}`, which none of the sets in RELEVANCE_SETS={names} declares \
             (`long` needs `commits` and `validation` beside it)",
            q.set,
            q.corpus
        );
    }
    Ok(all)
}

/// The git directory of a corpus that comes from a repository ([`git_dir_of`]).
fn history_of(labels: &Labels, corpus: &str) -> anyhow::Result<Option<PathBuf>> {
    let Some(c) = labels.corpus.iter().find(|c| c.name == corpus) else {
        return Ok(None);
    };
    let Some(url) = c.git.as_deref() else {
        return Ok(None);
    };
    Ok(Some(git_dir_of(&c.name, url)?.0))
}

/// Where the corpora are checked out: `.codesearch/corpora/`.
fn corpora_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".codesearch/corpora")
}

/// The history of `url`: `$RELEVANCE_MIRRORS/<owner>+<repo>/repo` when that exists (a local
/// mirror; then `true`), else a blob-less clone kept beside the checkouts, made on first use.
fn git_dir_of(name: &str, url: &str) -> anyhow::Result<(PathBuf, bool)> {
    let slug = url
        .trim_end_matches(".git")
        .rsplitn(3, '/')
        .take(2)
        .collect::<Vec<_>>();
    let slug = format!(
        "{}+{}",
        slug.get(1).unwrap_or(&""),
        slug.first().unwrap_or(&"")
    );
    if let Some(mirror) = std::env::var("RELEVANCE_MIRRORS")
        .map(|m| PathBuf::from(m).join(&slug).join("repo"))
        .ok()
        .filter(|p| p.is_dir())
    {
        return Ok((mirror, true));
    }
    let clone = corpora_dir().join("git").join(format!("{slug}.git"));
    if !clone.is_dir() {
        println!("corpus {name}: cloning {url}");
        run(std::process::Command::new("git")
            .args(["clone", "--quiet", "--bare", "--filter=blob:none", url])
            .arg(&clone))?;
    }
    Ok((clone, false))
}

/// The git corpora's histories at their snapshots (newest first), from which each query is
/// searched with the change counts the daemon would have had for it ([`history_before`]): the
/// snapshot's own counts hold the commit that answers the query.
struct Histories<'a> {
    store: &'a Store,
    commits: HashMap<String, Vec<history::Commit>>,
    max_commits: usize,
}

impl<'a> Histories<'a> {
    async fn read(
        labels: &Labels,
        roots: &HashMap<String, Vec<PathBuf>>,
        store: &'a Store,
        max_commits: usize,
    ) -> anyhow::Result<Self> {
        let mut commits = HashMap::new();
        for c in labels.corpus.iter().filter(|c| roots.contains_key(&c.name)) {
            let (url, commit, path) = match (&c.git, &c.commit, &c.history) {
                (Some(url), Some(commit), _) => (url, commit, ""),
                (_, _, Some(h)) => (&h.git, &h.revision, h.path.as_str()),
                _ => continue,
            };
            let (git_dir, _) = git_dir_of(&c.name, url)?;
            let repository = || {
                let mut git = std::process::Command::new("git");
                git.arg("--git-dir").arg(&git_dir);
                git
            };
            let relative = format!("--relative={path}/");
            let (log_args, pathspec) = if path.is_empty() {
                (vec![], ".")
            } else {
                (vec![relative.as_str()], path)
            };
            let log = history::log(repository, &log_args, commit, 1_000_000, pathspec)
                .await?
                .with_context(|| format!("{commit} of {url} has no history"))?;
            commits.insert(c.name.clone(), log);
        }
        Ok(Self {
            store,
            commits,
            max_commits,
        })
    }

    /// Records, for `q`'s corpus, the change counts `q` is searched with.
    async fn set_for(&self, q: &Query) -> anyhow::Result<()> {
        if let Some(commits) = self.commits.get(&q.corpus) {
            let changes = history_before(commits, q, self.max_commits);
            self.store.set_file_changes(&q.corpus, &changes).await?;
        }
        Ok(())
    }
}

/// The change counts a query is searched with: for a query from a commit (`source`), those of
/// the `max_commits` commits before it, what the daemon would have recorded when the commit's
/// author began the change (none if the commit is not in the history); for another query, the
/// snapshot's. The snapshot's own counts would hold the commit that answers the query. The
/// files are named as in the snapshot searched (renames since the query's commit followed), as
/// its labels are.
fn history_before(
    commits: &[history::Commit],
    q: &Query,
    max_commits: usize,
) -> HashMap<String, f32> {
    let from = match q.source.as_deref().and_then(|s| s.strip_prefix("commit ")) {
        Some(id) => match commits.iter().position(|c| c.id.starts_with(id)) {
            Some(i) => i + 1,
            None => commits.len(),
        },
        None => 0,
    };
    let to = from.saturating_add(max_commits).min(commits.len());
    history::count(commits, from..to)
}

/// The tree of `url` at `commit`, checked out once under `.codesearch/corpora/<name>-<commit>`.
/// The history comes from `$RELEVANCE_MIRRORS/<owner>+<repo>/repo` when that exists (a local
/// mirror), else from a blob-less clone of `url` kept beside the checkouts.
fn checkout(name: &str, url: &str, commit: &str) -> anyhow::Result<PathBuf> {
    let base = corpora_dir();
    let dir = base.join(format!("{name}-{}", &commit[..commit.len().min(12)]));
    if dir.is_dir() {
        return Ok(dir);
    }
    let (git_dir, from_mirror) = git_dir_of(name, url)?;
    let partial = base.join(format!(".{name}-partial"));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial)?;
    // Through an index file of its own beside the checkout: nothing is written into the
    // repository. A mirror may lack its largest blobs (a `.wasm`, a font): those files are left
    // out, and said so. A blob-less clone fetches what it lacks instead.
    let index = base.join(format!(".{name}-partial.index"));
    let git = || {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("--git-dir")
            .arg(&git_dir)
            .arg("--work-tree")
            .arg(&partial)
            .env("GIT_INDEX_FILE", &index);
        cmd
    };
    run(git().args(["read-tree", commit])).with_context(|| format!("reading {commit} of {url}"))?;
    if from_mirror {
        let absent = absent_blobs(git)?;
        if !absent.is_empty() {
            println!(
                "corpus {name}: {} file(s) left out, their blobs absent from the mirror: {}",
                absent.len(),
                absent.join(", ")
            );
            let paths: String = absent.iter().map(|p| format!("{p}\0")).collect();
            let removed = piped(
                git().args(["update-index", "--force-remove", "-z", "--stdin"]),
                paths,
            )?;
            anyhow::ensure!(removed.status.success(), "git update-index failed");
        }
    }
    run(git().args(["checkout-index", "--all"]))
        .with_context(|| format!("checking out {commit} of {url}"))?;
    let _ = std::fs::remove_file(&index);
    std::fs::rename(&partial, &dir)?;
    Ok(dir)
}

/// The paths of the index (`git` runs with it) whose blobs the repository does not hold.
fn absent_blobs(git: impl Fn() -> std::process::Command) -> anyhow::Result<Vec<String>> {
    let listed = git().args(["ls-files", "--stage", "-z"]).output()?;
    anyhow::ensure!(listed.status.success(), "git ls-files failed");
    // `<mode> <object> <stage>\t<path>`, NUL-separated.
    let entries: Vec<(String, String)> = String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter_map(|e| {
            let (meta, path) = e.split_once('\t')?;
            let object = meta.split(' ').nth(1)?;
            Some((object.to_owned(), path.to_owned()))
        })
        .collect();
    let objects: String = entries.iter().map(|(o, _)| format!("{o}\n")).collect();
    let out = piped(git().args(["cat-file", "--batch-check"]), objects)?;
    anyhow::ensure!(out.status.success(), "git cat-file failed");
    // One line per object, in order: `<object> missing` for an absent one.
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .zip(&entries)
        .filter(|(line, _)| line.ends_with(" missing"))
        .map(|(_, (_, path))| path.clone())
        .collect())
}

/// Runs `cmd` with `input` on its standard input (written from a thread of its own, so that a
/// full output pipe cannot stall it), and collects its output.
fn piped(cmd: &mut std::process::Command, input: String) -> anyhow::Result<std::process::Output> {
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("running {cmd:?}"))?;
    let mut stdin = child.stdin.take().context("the child's input")?;
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes())
    });
    let out = child.wait_with_output()?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("the input writer panicked"))??;
    Ok(out)
}

fn run(cmd: &mut std::process::Command) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
    Ok(())
}

/// One query's rankings: lexical-only, vector-only and hybrid search's files, and the
/// baseline's.
struct Outcome<'a> {
    query: &'a Query,
    /// The corpus's files that the index holds.
    indexed: Arc<HashSet<String>>,
    ranked: [Vec<String>; 4],
}

/// #19's check, repository by repository, over the queries taken from its history (a
/// `source = "commit …"`), every set that ran pooled: hybrid's R@10 and MRR@10 each at least
/// 0.05 above the file-level BM25 baseline's, and not below lexical-only's or vector-only's.
/// `relevant` gives a query's labels.
fn print_per_repository<'a>(
    title: &str,
    outcomes: &[Outcome<'a>],
    relevant: impl Fn(&Outcome<'a>) -> Option<Vec<String>>,
) {
    let mut per: Vec<(&str, [Score; 4])> = Vec::new();
    for o in outcomes {
        if !o
            .query
            .source
            .as_deref()
            .is_some_and(|s| s.starts_with("commit "))
        {
            continue;
        }
        let Some(rel) = relevant(o) else { continue };
        let name = o.query.corpus.as_str();
        let i = match per.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                per.push((name, [Score::default(); 4]));
                per.len() - 1
            }
        };
        for (score, ranked) in per[i].1.iter_mut().zip(&o.ranked) {
            score.add(ranked, &rel);
        }
    }
    if per.is_empty() {
        return;
    }
    println!(
        "\n{title}\n  {:<12} {:>7}  {:>11}  {:>11}  {:>11}  {:>11}  {:>15}  #19's check",
        "repository", "queries", "lexical", "vector", "hybrid", "bm25-file", "hybrid - bm25"
    );
    let mut met = 0;
    for (name, s) in &per {
        let n = s[0].n.max(1) as f64;
        let (r10, mrr) = (|i: usize| s[i].r10 / n, |i: usize| s[i].mrr / n);
        let mut short = Vec::new();
        for (metric, at) in [("R@10", &r10 as &dyn Fn(usize) -> f64), ("MRR", &mrr)] {
            let lead = at(2) - at(3);
            if lead < 0.05 - 1e-9 {
                short.push(format!("{metric} {lead:+.3} over bm25"));
            }
            for (m, mode) in [(0, "lexical"), (1, "vector")] {
                if at(2) < at(m) {
                    short.push(format!("{metric} below {mode}"));
                }
            }
        }
        met += usize::from(short.is_empty());
        let pair = |i: usize| format!("{:.3}/{:.3}", r10(i), mrr(i));
        println!(
            "  {name:<12} {:>7}  {}  {}  {}  {}  {:>+7.3}/{:+.3}  {}",
            s[0].n,
            pair(0),
            pair(1),
            pair(2),
            pair(3),
            r10(2) - r10(3),
            mrr(2) - mrr(3),
            if short.is_empty() {
                "met".to_owned()
            } else {
                short.join(", ")
            }
        );
    }
    println!(
        "  (R@10/MRR@10; met on {met} of {} repositories)",
        per.len()
    );
}

/// For each commit a query came from (its `source`), the tests and changelogs it added or
/// modified that the index holds at the snapshot. The sets' labels leave them out
/// (`scripts/relevance-from-git.py`), so they cannot show what ranking tests and changelogs
/// lower (`search.test_weight`, `search.changelog_weight`) costs a question they answer; scoring
/// with them as labels too shows it.
fn tests_and_changelogs_changed(
    labels: &Labels,
    outcomes: &[Outcome<'_>],
    cfg: &Config,
) -> anyhow::Result<HashMap<String, Vec<String>>> {
    let classifier = Classifier::new(&cfg.index)?;
    let mut found = HashMap::new();
    for o in outcomes {
        let q = o.query;
        let Some(source) = q.source.as_deref() else {
            continue;
        };
        let Some(commit) = source.strip_prefix("commit ") else {
            continue;
        };
        if found.contains_key(source) {
            continue;
        }
        let Some(git_dir) = history_of(labels, &q.corpus)? else {
            continue;
        };
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args([
                "show",
                "--no-renames",
                "--diff-filter=AM",
                "--name-only",
                "--format=",
            ])
            .arg(commit)
            .output()
            .with_context(|| format!("running git show {commit}"))?;
        anyhow::ensure!(
            out.status.success(),
            "git show {commit} failed in {}",
            git_dir.display()
        );
        let files = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|path| o.indexed.contains(*path))
            .filter(|path| {
                is_changelog(path) || classifier.classify(path).1.as_deref() == Some("test")
            })
            .map(str::to_owned)
            .collect();
        found.insert(source.to_owned(), files);
    }
    Ok(found)
}

/// One block of the report: the figures of each mode and of the baseline.
fn print_table(name: &str, scores: &[Score; 4]) {
    println!(
        "\n{name} ({} queries)\n  {:<10} {:>6} {:>6} {:>6}",
        scores[0].n, "mode", "R@5", "R@10", "MRR"
    );
    for (score, label) in scores.iter().zip(MODES.iter().chain(["bm25-file"].iter())) {
        println!("{}", score.row(label));
    }
}

/// The baseline: Okapi BM25 (k1 = 1.2, b = 0.75) over whole files, words as code search
/// splits them, no stemming, no stop words: what a plain keyword engine does.
struct FileBm25 {
    docs: Vec<(String, HashMap<String, u32>, usize)>,
    df: HashMap<String, usize>,
    avg_len: f64,
}

impl FileBm25 {
    fn build(roots: &[PathBuf], cfg: &Config) -> anyhow::Result<Self> {
        let mut docs = Vec::new();
        let mut df: HashMap<String, usize> = HashMap::new();
        for root in roots {
            let (candidates, _, _) = Walker::new(root, &cfg.index)?.walk();
            for c in candidates {
                let Ok(text) = std::fs::read_to_string(&c.abs_path) else {
                    continue;
                };
                let mut tf: HashMap<String, u32> = HashMap::new();
                let mut len = 0;
                for w in words(&text) {
                    *tf.entry(w).or_default() += 1;
                    len += 1;
                }
                for t in tf.keys() {
                    *df.entry(t.clone()).or_default() += 1;
                }
                docs.push((c.rel_path, tf, len));
            }
        }
        let avg_len = docs.iter().map(|d| d.2).sum::<usize>() as f64 / docs.len().max(1) as f64;
        Ok(Self { docs, df, avg_len })
    }

    /// The files it ranks: what the index holds of the corpus.
    fn paths(&self) -> impl Iterator<Item = &str> {
        self.docs.iter().map(|(path, _, _)| path.as_str())
    }

    fn rank(&self, query: &str, k: usize) -> Vec<String> {
        let n = self.docs.len() as f64;
        let terms: HashSet<String> = words(query).collect();
        let mut scored: Vec<(f64, &str)> = self
            .docs
            .iter()
            .map(|(path, tf, len)| {
                let s: f64 = terms
                    .iter()
                    .filter_map(|t| {
                        let f = f64::from(*tf.get(t)?);
                        let df = *self.df.get(t)? as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * *len as f64 / self.avg_len)))
                    })
                    .sum();
                (s, path.as_str())
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(k)
            .map(|(_, p)| p.to_owned())
            .collect()
    }
}
