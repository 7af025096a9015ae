//! The in-process BERT model on ONNX Runtime: the same weights and the same vectors as the
//! candle engine (cosine similarity above 0.99999 on every test text), in about a third of the
//! time for a query.
//!
//! Why a second engine: for the dozen tokens of a query, candle's CPU matrix product packs every
//! weight matrix again on every call, and the packing costs more than the arithmetic; ONNX
//! Runtime packs the constant weights once, when the session is created. Measured on this
//! project's 2-core machine (docs/BENCHMARKS.md, "The query embedding"): a 10-token query
//! 14 ms on candle, under 5 ms here; a batch of 8 chunks of 128 tokens 590 ms against 260 ms.
//!
//! Queries go, by default, through a second model whose linear layers hold 8-bit weights
//! (`embed.local_query_int8`, [`graph`]; [`super::local`] keeps it apart from the
//! documents'): a query is memory-bound on its 42 MB of float weights, which a daemon finds
//! out of the caches after each pause; less than half the bytes (the three larger matrices of
//! each layer in 8 bits) cut the query embedding from 6.5–7.0 to 4.3–4.5 ms in that case. Its
//! vectors are within 0.9997 of the exact ones, and documents always go through the exact
//! model, so the stored vectors do not depend on the setting (docs/BENCHMARKS.md).
//!
//! The graph is written here from `config.json` and `model.safetensors` ([`graph`]); there is
//! no converted model file to keep in step. The runtime is a shared library loaded when the
//! first model loads (`embed.onnxruntime`; `scripts/setup.sh` unpacks it from the PyPI wheel
//! `onnxruntime`); a process loads one runtime, the first one asked for.

mod graph;
mod proto;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use candle_transformers::models::bert::Config;
use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{DynValue, Tensor};
use safetensors::SafeTensors;

pub struct OnnxBert {
    session: Session,
    hidden: usize,
}

/// What the sessions of one checkpoint share: the runtime, the parsed weights, and the
/// word-embedding table, which both the exact and the 8-bit graph read as it is. ONNX
/// Runtime keeps a copy of every initializer per session, so two sessions held the table
/// twice (47 MB of all-MiniLM-L6-v2's 90); handed to each session as the same value
/// (`AddInitializer`, which replaces the model's initializer of that name), it is held once,
/// and the model's bytes carry only a stand-in for it ([`graph`]). The tests check the
/// vectors this gives against candle's (`tests/it/local_model.rs`).
pub struct Checkpoint<'w> {
    environment: Environment,
    config: Config,
    tensors: SafeTensors<'w>,
    word_embeddings: Arc<DynValue>,
}

impl<'w> Checkpoint<'w> {
    /// Loads the runtime and reads the weights' header; copies the word-embedding table.
    pub fn read(library: &Path, config: &Config, weights: &'w [u8]) -> Result<Self, String> {
        let environment = environment(library)?;
        let tensors =
            SafeTensors::deserialize(weights).map_err(|e| format!("model.safetensors: {e}"))?;
        let (shape, table) = graph::word_embeddings(&tensors)?;
        if shape != [config.vocab_size, config.hidden_size] {
            return Err(format!(
                "the word-embedding table is {shape:?}, not [{}, {}] as config.json says",
                config.vocab_size, config.hidden_size
            ));
        }
        let word_embeddings = Tensor::from_array((shape, table))
            .map_err(|e| format!("the word-embedding table: {e}"))?
            .into_dyn();
        Ok(Self {
            environment,
            config: config.clone(),
            tensors,
            word_embeddings: Arc::new(word_embeddings),
        })
    }

    /// Builds the graph and its session; with `int8`, the linear layers outside attention
    /// hold 8-bit weights ([`graph`]), for queries. Blocking (about half a second): call from
    /// a blocking thread.
    pub fn session(&self, threads: usize, int8: bool) -> Result<OnnxBert, String> {
        let model = graph::bert(&self.config, &self.tensors, int8)?;
        let err = |e: ort::Error<_>| format!("ONNX Runtime session: {e}");
        let session = Session::builder(&self.environment)
            .map_err(|e| format!("ONNX Runtime session: {e}"))?
            .with_optimization_level(GraphOptimizationLevel::All)
            .map_err(err)?
            .with_intra_threads(threads)
            .map_err(err)?
            // Spinning threads would take the cores from PostgreSQL and the indexer
            // between two searches.
            .with_intra_op_spinning(false)
            .map_err(err)?
            .with_inter_threads(1)
            .map_err(err)?
            .with_initializer(graph::WORD_EMBEDDINGS, Arc::clone(&self.word_embeddings))
            .map_err(err)?
            .commit_from_memory(&model)
            .map_err(|e| format!("ONNX Runtime rejected the model: {e}"))?;
        Ok(OnnxBert {
            session,
            hidden: self.config.hidden_size,
        })
    }
}

impl OnnxBert {
    /// Mean-pooled hidden states of `batch` sequences of `tokens` ids each (row-major), not
    /// normalised.
    pub fn forward(
        &mut self,
        ids: Vec<i64>,
        mask: Vec<i64>,
        batch: usize,
        tokens: usize,
    ) -> Result<Vec<Vec<f32>>, String> {
        let err = |e: ort::Error| e.to_string();
        let ids = Tensor::from_array(([batch, tokens], ids)).map_err(err)?;
        let mask = Tensor::from_array(([batch, tokens], mask)).map_err(err)?;
        let outputs = self
            .session
            .run(ort::inputs![graph::INPUT_IDS => ids, graph::ATTENTION_MASK => mask])
            .map_err(err)?;
        let (_, pooled) = outputs[graph::POOLED]
            .try_extract_tensor::<f32>()
            .map_err(err)?;
        if pooled.len() != batch * self.hidden {
            return Err(format!(
                "the model returned {} values for {batch} vectors of {}",
                pooled.len(),
                self.hidden
            ));
        }
        Ok(pooled
            .chunks_exact(self.hidden)
            .map(<[f32]>::to_vec)
            .collect())
    }
}

/// The process' ONNX Runtime environment. A process loads one runtime library, the first one
/// that loads; a failed load is not remembered, so a later, correct path still works.
fn environment(library: &Path) -> Result<Environment, String> {
    static LOADED: Mutex<Option<(PathBuf, Environment)>> = Mutex::new(None);
    if !library.is_file() {
        return Err(format!(
            "no ONNX Runtime library at {} (run scripts/setup.sh, or set CODESEARCH_ONNXRUNTIME)",
            library.display()
        ));
    }
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((path, environment)) = &*loaded {
        if path != library {
            tracing::warn!(
                loaded = %path.display(),
                asked = %library.display(),
                "ONNX Runtime is already loaded from another path; using it"
            );
        }
        return Ok(environment.clone());
    }
    let environment = ort::init_from(library)
        .map_err(|e| format!("loading ONNX Runtime: {e}"))?
        .with_name("codesearch")
        .build()
        .map_err(|e| format!("starting ONNX Runtime: {e}"))?;
    *loaded = Some((library.to_owned(), environment.clone()));
    Ok(environment)
}
