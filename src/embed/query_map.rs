//! A learned linear map on the local model's query vectors (`embed.local_query_map`).
//!
//! all-MiniLM-L6-v2 was trained on sentence pairs, not on questions about code, so a query's
//! vector and the vectors of the chunks that answer it sit further apart than they could. The
//! map moves only the query: `q' = normalise(q + Δq)`, with `Δ` a 384 × 384 matrix learned on the
//! commit subjects of twelve repositories that no relevance set searches
//! (`benches/relevance/train.toml`, `scripts/train-query-map.py`), so that a query's vector
//! comes nearer the chunks of the files its commit changed. The stored vectors do not depend on
//! it: turning it off or on re-embeds nothing. What it gains and costs: docs/BENCHMARKS.md ("A
//! query-side map learned on other repositories").
//!
//! `Δ` ships inside the binary as 147,456 half-precision floats, row-major, little-endian
//! (288 KiB; its largest entry is about 0.03, so half precision loses nothing that matters).

use half::f16;

/// `Δ` for all-MiniLM-L6-v2's 384 dimensions.
const MINILM_L6: &[u8] = include_bytes!("../../assets/query-map-all-MiniLM-L6-v2.f16");

pub struct QueryMap {
    /// `Δ`, row-major: `dim` rows of `dim`.
    delta: Vec<f32>,
    dim: usize,
}

impl QueryMap {
    /// The map learned for `model_id`, if there is one.
    pub fn for_model(model_id: &str, dim: usize) -> Option<Self> {
        let bytes = match model_id {
            "local/all-MiniLM-L6-v2" => MINILM_L6,
            _ => return None,
        };
        Self::from_le_f16(bytes, dim)
    }

    fn from_le_f16(bytes: &[u8], dim: usize) -> Option<Self> {
        if bytes.len() != dim * dim * 2 {
            return None;
        }
        let delta = bytes
            .chunks_exact(2)
            .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        Some(Self { delta, dim })
    }

    /// `v ← normalise(v + Δv)`. A vector of another length is left as it is.
    pub fn apply(&self, v: &mut [f32]) {
        if v.len() != self.dim {
            return;
        }
        let q = v.to_vec();
        for (out, row) in v.iter_mut().zip(self.delta.chunks_exact(self.dim)) {
            *out += row.iter().zip(&q).map(|(d, x)| d * x).sum::<f32>();
        }
        super::normalize(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_map_loads_for_minilm_only_and_moves_a_query_a_little() {
        let map = QueryMap::for_model("local/all-MiniLM-L6-v2", 384).expect("the shipped map");
        assert!(QueryMap::for_model("local/all-MiniLM-L6-v2", 768).is_none());
        assert!(QueryMap::for_model("ollama/nomic-embed-text", 768).is_none());
        // A unit vector stays a unit vector, near where it was: the map is the identity plus a
        // small learned part, not a rotation to somewhere else.
        let mut v: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
            .collect();
        super::super::normalize(&mut v);
        let before = v.clone();
        map.apply(&mut v);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        let cosine: f32 = v.iter().zip(&before).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.8 && cosine < 0.99999, "cosine {cosine}");
    }

    #[test]
    fn apply_is_the_identity_plus_delta_then_normalised() {
        // Δ = [[0, 1], [0, 0]]: (1, 1) → (2, 1) / √5.
        let one = f16::from_f32(1.0).to_le_bytes();
        let zero = f16::from_f32(0.0).to_le_bytes();
        let bytes: Vec<u8> = [zero, one, zero, zero].concat();
        let map = QueryMap::from_le_f16(&bytes, 2).expect("a 2 x 2 map");
        let mut v = vec![1.0, 1.0];
        map.apply(&mut v);
        let s = 5f32.sqrt();
        assert!(
            (v[0] - 2.0 / s).abs() < 1e-6 && (v[1] - 1.0 / s).abs() < 1e-6,
            "{v:?}"
        );
        assert!(QueryMap::from_le_f16(&bytes[..6], 2).is_none());
    }
}
