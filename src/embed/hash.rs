//! Deterministic bag-of-words vectors (feature hashing of identifier parts).
//!
//! Not a product default: it exists so tests and benchmarks can exercise everything but the
//! model, quickly and reproducibly. Texts sharing words get similar vectors, which is enough
//! for a test to find the chunk it expects.

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder, InputKind, normalize};

pub struct HashEmbedder {
    dimension: usize,
}

impl HashEmbedder {
    pub fn new(dimension: usize) -> Self {
        Self { dimension }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dimension];
        for word in crate::text::words(text) {
            let digest = Sha256::digest(word.as_bytes());
            let bucket = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]) as usize
                % self.dimension;
            let sign = if digest[4] & 1 == 0 { 1.0 } else { -1.0 };
            v[bucket] += sign;
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "hash/v1"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        _kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move { Ok(texts.iter().map(|t| self.embed_one(t)).collect()) })
    }
}
