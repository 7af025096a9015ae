//! A BERT sentence encoder as an ONNX graph, written from the same `config.json` and
//! `model.safetensors` that candle reads.
//!
//! The arithmetic is candle's `BertModel` followed by our pooling: word + position + token-type
//! embeddings and LayerNorm; per layer, self-attention, output projection, residual and
//! LayerNorm, the feed-forward block with erf GELU, residual and LayerNorm; then the mean over
//! the tokens the attention mask keeps. Weights are stored transposed (`[in, out]`) so each
//! projection is a plain MatMul, which ONNX Runtime pre-packs once at load.
//!
//! Attention, bias + GELU and residual + bias + LayerNorm are each one node of ONNX Runtime's
//! own operators (`com.microsoft` `Attention`, `BiasGelu`, `SkipLayerNormalization`): 57 nodes
//! where the same model in standard operators took 169 (ONNX Runtime fused only the GELUs).
//! For a query of a dozen tokens each node costs more in dispatch than in arithmetic: the
//! fused graph embeds a short query 10 % faster, with the same vectors (docs/BENCHMARKS.md).
//!
//! With `int8`, the linear layers outside attention (three of the four weight matrices of a
//! layer) are written as `MatMulNBits` of 8-bit weights, one scale per 32 inputs: for queries,
//! a quarter of those bytes to read ([`super::OnnxBert`]).
//!
//! Inputs: `input_ids` and `attention_mask`, int64 `[batch, tokens]`. Output: `pooled`, float
//! `[batch, hidden]`, not yet normalised.

use candle_transformers::models::bert::{Config, HiddenAct, PositionEmbeddingType};
use safetensors::{Dtype, SafeTensors};

use super::proto::Message;

pub const INPUT_IDS: &str = "input_ids";
pub const ATTENTION_MASK: &str = "attention_mask";
pub const POOLED: &str = "pooled";
/// The word-embedding table's initializer, which the sessions of one checkpoint share
/// ([`super::Checkpoint`]).
pub const WORD_EMBEDDINGS: &str = "word_embeddings";

/// ONNX operator set the graph is written against (LayerNormalization needs 17, Split's
/// `num_outputs` 18).
const OPSET: i64 = 18;
/// ONNX IR version 8 (ONNX 1.10+), which every ONNX Runtime of the last years reads.
const IR_VERSION: i64 = 8;

/// ONNX Runtime's own operators (`com.microsoft`): attention, bias + GELU and residual +
/// LayerNorm as one node each.
const CONTRIB: &str = "com.microsoft";

const FLOAT: i64 = 1;
const UINT8: i64 = 2;
const INT32: i64 = 6;
const INT64: i64 = 7;

/// The checkpoint's word-embedding table.
const WORD_EMBEDDINGS_KEY: &str = "embeddings.word_embeddings.weight";

/// The word-embedding table's shape and values, for the value the sessions share.
pub fn word_embeddings(weights: &SafeTensors<'_>) -> Result<(Vec<usize>, Vec<f32>), String> {
    Weights(weights).f32(WORD_EMBEDDINGS_KEY)
}

/// The model's bytes, ready for `Session::commit_from_memory`.
pub fn bert(config: &Config, weights: &SafeTensors<'_>, int8: bool) -> Result<Vec<u8>, String> {
    if config.position_embedding_type != PositionEmbeddingType::Absolute
        || config.hidden_act != HiddenAct::Gelu
    {
        return Err(
            "the ONNX engine supports BERT with absolute positions and erf GELU (set embed.local_engine = \"candle\")"
                .into(),
        );
    }
    let hidden = config.hidden_size;
    let heads = config.num_attention_heads;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(format!(
            "hidden size {hidden} does not split into {heads} heads"
        ));
    }
    let eps = config.layer_norm_eps as f32;
    let weights = Weights(weights);
    let mut g = Graph {
        int8,
        ..Graph::default()
    };

    // Embeddings.
    let shape = g.node("Shape", &[INPUT_IDS], &[]);
    let one = g.int64("one", &[], &[1]);
    let seq = g.node("Gather", &[&shape, &one], &[Attr::Int("axis", 0)]);
    let zero = g.int64("zero", &[], &[0]);
    let positions = g.node("Range", &[&zero, &seq, &one], &[]);
    // Not in the model's bytes: the session is handed the table ([`super::Checkpoint`]).
    let word_table = g.handed(WORD_EMBEDDINGS, hidden);
    let position_table = g.weight(
        "position_embeddings",
        &weights,
        "embeddings.position_embeddings.weight",
    )?;
    let (_, types) = weights.f32("embeddings.token_type_embeddings.weight")?;
    let type_0 = g.float("token_type_0", &[hidden as i64], &types[..hidden]);
    let word = g.node("Gather", &[&word_table, INPUT_IDS], &[]);
    let position = g.node("Gather", &[&position_table, &positions], &[]);
    let mut x = g.skip_layer_norm(
        &weights,
        [&word, &position, &type_0],
        "embeddings.LayerNorm",
        eps,
    )?;

    // The attention mask as ONNX Runtime's attention reads it: int32 `[batch, tokens]`, 1 for
    // the tokens kept.
    let mask_index = g.node("Cast", &[ATTENTION_MASK], &[Attr::Int("to", INT32)]);

    for i in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{i}");
        let a = format!("{p}.attention");
        let (w, b) = g.qkv(&weights, &a, hidden)?;
        let context = g.contrib(
            "Attention",
            &[&x, &w, &b, &mask_index],
            &[Attr::Int("num_heads", heads as i64)],
        );
        x = g.dense_residual_norm(&weights, &context, &x, &a, eps)?;
        let (inner, b) = g.linear(&weights, &x, &format!("{p}.intermediate.dense"))?;
        let activated = g.contrib("BiasGelu", &[&inner, &b], &[]);
        x = g.dense_residual_norm(&weights, &activated, &x, &p, eps)?;
    }

    // Mean over the tokens the mask keeps.
    let mask = g.node("Cast", &[ATTENTION_MASK], &[Attr::Int("to", FLOAT)]);
    let axis_2 = g.int64("axis_2", &[1], &[2]);
    let mask_3d = g.node("Unsqueeze", &[&mask, &axis_2], &[]);
    let masked = g.node("Mul", &[&x, &mask_3d], &[]);
    let axis_1 = g.int64("axis_1", &[1], &[1]);
    let total = g.node(
        "ReduceSum",
        &[&masked, &axis_1],
        &[Attr::Int("keepdims", 0)],
    );
    let count = g.node("ReduceSum", &[&mask, &axis_1], &[Attr::Int("keepdims", 1)]);
    g.node_named("Div", &[&total, &count], POOLED, &[]);
    Ok(g.model(hidden))
}

/// The checkpoint's tensors, found with or without the `bert.` prefix some exports use.
struct Weights<'a>(&'a SafeTensors<'a>);

impl<'a> Weights<'a> {
    /// A tensor's shape and its little-endian F32 bytes, as the file holds them.
    fn raw(&self, name: &str) -> Result<(Vec<usize>, &'a [u8]), String> {
        let view = self
            .0
            .tensor(name)
            .or_else(|_| self.0.tensor(&format!("bert.{name}")))
            .map_err(|_| format!("model.safetensors has no tensor `{name}`"))?;
        if view.dtype() != Dtype::F32 {
            return Err(format!(
                "`{name}` is {:?}; the ONNX engine reads F32 weights (set embed.local_engine = \"candle\")",
                view.dtype()
            ));
        }
        Ok((view.shape().to_vec(), view.data()))
    }

    fn f32(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        let (shape, raw) = self.raw(name)?;
        let data = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok((shape, data))
    }

    /// A linear layer's weight (`[out, in]` in the checkpoint) as `[in, out]`, and its bias.
    fn linear(&self, prefix: &str) -> Result<(usize, usize, Vec<f32>, Vec<f32>), String> {
        let (inp, out, w, b) = self.linear_as_stored(prefix)?;
        Ok((inp, out, transpose(&w, inp), b))
    }

    /// A linear layer's weight as the checkpoint holds it (`[out, in]`), and its bias.
    fn linear_as_stored(&self, prefix: &str) -> Result<(usize, usize, Vec<f32>, Vec<f32>), String> {
        let (shape, w) = self.f32(&format!("{prefix}.weight"))?;
        let [out, inp] = shape[..] else {
            return Err(format!("`{prefix}.weight` is not a matrix"));
        };
        let (_, b) = self.f32(&format!("{prefix}.bias"))?;
        Ok((inp, out, w, b))
    }
}

/// A row-major matrix of rows of `cols` values, transposed.
fn transpose(w: &[f32], cols: usize) -> Vec<f32> {
    let rows = w.len() / cols;
    let mut t = vec![0.0f32; w.len()];
    for (r, row) in w.chunks_exact(cols).enumerate() {
        for (c, &value) in row.iter().enumerate() {
            t[c * rows + r] = value;
        }
    }
    t
}

enum Attr<'a> {
    Int(&'a str, i64),
    Float(&'a str, f32),
}

#[derive(Default)]
struct Graph {
    nodes: Vec<Message>,
    initializers: Vec<Message>,
    next: usize,
    /// Whether the linear layers' weights are written in 8 bits.
    int8: bool,
}

/// Inputs per scale of an 8-bit weight.
const INT8_BLOCK: usize = 32;

/// A `[out, in]` weight in 8 bits, blocks of [`INT8_BLOCK`] inputs: the bytes (value + 128)
/// and one scale per block, its largest magnitude over 127.
fn quantize_int8(w: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let mut bytes = Vec::with_capacity(w.len());
    let mut scales = Vec::with_capacity(w.len() / INT8_BLOCK);
    for block in w.chunks_exact(INT8_BLOCK) {
        let max = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        bytes.extend(
            block
                .iter()
                .map(|v| ((v / scale).round().clamp(-127.0, 127.0) as i32 + 128) as u8),
        );
    }
    (bytes, scales)
}

impl Graph {
    fn fresh(&mut self, op: &str) -> String {
        self.next += 1;
        format!("{}_{}", op.to_lowercase(), self.next)
    }

    fn node(&mut self, op: &str, inputs: &[&str], attrs: &[Attr<'_>]) -> String {
        let output = self.fresh(op);
        self.node_named(op, inputs, &output, attrs);
        output
    }

    /// A node of one of ONNX Runtime's own operators ([`CONTRIB`]).
    fn contrib(&mut self, op: &str, inputs: &[&str], attrs: &[Attr<'_>]) -> String {
        let output = self.fresh(op);
        self.push_node(op, inputs, &[&output], attrs, CONTRIB);
        output
    }

    fn node_named(&mut self, op: &str, inputs: &[&str], output: &str, attrs: &[Attr<'_>]) {
        self.push_node(op, inputs, &[output], attrs, "");
    }

    fn push_node(
        &mut self,
        op: &str,
        inputs: &[&str],
        outputs: &[&str],
        attrs: &[Attr<'_>],
        domain: &str,
    ) {
        let mut n = Message::new();
        for input in inputs {
            n.string(1, input);
        }
        for output in outputs {
            n.string(2, output);
        }
        n.string(3, outputs[0]).string(4, op);
        for attr in attrs {
            let mut a = Message::new();
            match *attr {
                Attr::Int(name, v) => a.string(1, name).int(3, v).int(20, 2),
                Attr::Float(name, v) => a.string(1, name).float(2, v).int(20, 1),
            };
            n.message(5, &a);
        }
        if !domain.is_empty() {
            n.string(7, domain);
        }
        self.nodes.push(n);
    }

    fn tensor(&mut self, name: &str, dims: &[i64], data_type: i64, raw: &[u8]) -> String {
        let mut t = Message::with_capacity(raw.len() + 64);
        t.ints(1, dims)
            .int(2, data_type)
            .string(8, name)
            .bytes(9, raw);
        self.initializers.push(t);
        name.to_owned()
    }

    /// A stand-in for a float initializer the session is handed (`AddInitializer`), which
    /// replaces it: one row of `width` zeros, so that the model does not hold the values.
    fn handed(&mut self, name: &str, width: usize) -> String {
        self.float(name, &[1, width as i64], &vec![0.0; width])
    }

    fn float(&mut self, name: &str, dims: &[i64], data: &[f32]) -> String {
        let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensor(name, dims, FLOAT, &raw)
    }

    fn int64(&mut self, name: &str, dims: &[i64], data: &[i64]) -> String {
        let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensor(name, dims, INT64, &raw)
    }

    /// A checkpoint tensor stored as it is: its bytes are copied, not decoded.
    fn weight(&mut self, name: &str, weights: &Weights<'_>, key: &str) -> Result<String, String> {
        let (shape, raw) = weights.raw(key)?;
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        Ok(self.tensor(name, &dims, FLOAT, raw))
    }

    /// `x W` of a linear layer, and the layer's bias (added by the node that follows).
    fn linear(
        &mut self,
        weights: &Weights<'_>,
        x: &str,
        prefix: &str,
    ) -> Result<(String, String), String> {
        let (inp, out, w, b) = weights.linear_as_stored(prefix)?;
        let b = self.float(&format!("{prefix}.bias"), &[out as i64], &b);
        let product = if self.int8 {
            self.matmul_int8(x, prefix, &w, inp, out)?
        } else {
            let w = transpose(&w, inp);
            let w = self.float(&format!("{prefix}.weight_t"), &[inp as i64, out as i64], &w);
            self.node("MatMul", &[x, &w], &[])
        };
        Ok((product, b))
    }

    /// `x W` with `w` (`[out, in]`, the layout `MatMulNBits` reads) in 8 bits: blocks of
    /// [`INT8_BLOCK`] inputs per output, each with its own scale (symmetric, ONNX Runtime's
    /// default zero point 128).
    fn matmul_int8(
        &mut self,
        x: &str,
        prefix: &str,
        w: &[f32],
        inp: usize,
        out: usize,
    ) -> Result<String, String> {
        if !inp.is_multiple_of(INT8_BLOCK) {
            return Err(format!(
                "`{prefix}.weight` has {inp} inputs, not blocks of {INT8_BLOCK}"
            ));
        }
        let (quantized, scales) = quantize_int8(w);
        let blocks = (inp / INT8_BLOCK) as i64;
        let q = self.tensor(
            &format!("{prefix}.weight_q8"),
            &[out as i64, blocks, INT8_BLOCK as i64],
            UINT8,
            &quantized,
        );
        let scales = self.float(
            &format!("{prefix}.weight_scales"),
            &[out as i64 * blocks],
            &scales,
        );
        Ok(self.contrib(
            "MatMulNBits",
            &[x, &q, &scales],
            &[
                Attr::Int("K", inp as i64),
                Attr::Int("N", out as i64),
                Attr::Int("bits", 8),
                Attr::Int("block_size", INT8_BLOCK as i64),
                // Inputs quantised to 8 bits per block too, products in integers: with
                // the weights dequantised to floats instead (level 1), a query took 12 ms.
                Attr::Int("accuracy_level", 4),
            ],
        ))
    }

    /// A block's output: `LayerNorm(x W + b + residual)` of `{prefix}.output.dense` and
    /// `{prefix}.output.LayerNorm`.
    fn dense_residual_norm(
        &mut self,
        weights: &Weights<'_>,
        x: &str,
        residual: &str,
        prefix: &str,
        eps: f32,
    ) -> Result<String, String> {
        let (product, b) = self.linear(weights, x, &format!("{prefix}.output.dense"))?;
        self.skip_layer_norm(
            weights,
            [&product, residual, &b],
            &format!("{prefix}.output.LayerNorm"),
            eps,
        )
    }

    /// The query, key and value projections as one `[hidden, 3 * hidden]` weight and one bias.
    fn qkv(
        &mut self,
        weights: &Weights<'_>,
        prefix: &str,
        hidden: usize,
    ) -> Result<(String, String), String> {
        let mut w = vec![0.0f32; hidden * 3 * hidden];
        let mut b = Vec::with_capacity(3 * hidden);
        for (part, name) in ["query", "key", "value"].iter().enumerate() {
            let (inp, out, t, bias) = weights.linear(&format!("{prefix}.self.{name}"))?;
            if inp != hidden || out != hidden {
                return Err(format!(
                    "`{prefix}.self.{name}` is {out}x{inp}, not {hidden}x{hidden}"
                ));
            }
            for i in 0..hidden {
                let row = &t[i * hidden..(i + 1) * hidden];
                let at = i * 3 * hidden + part * hidden;
                w[at..at + hidden].copy_from_slice(row);
            }
            b.extend(bias);
        }
        let dims = [hidden as i64, 3 * hidden as i64];
        let w = self.float(&format!("{prefix}.qkv.weight_t"), &dims, &w);
        let b = self.float(&format!("{prefix}.qkv.bias"), &[3 * hidden as i64], &b);
        Ok((w, b))
    }

    /// `LayerNorm(input + skip + bias)` with the checkpoint's `{prefix}.weight` and
    /// `{prefix}.bias`, as one node.
    fn skip_layer_norm(
        &mut self,
        weights: &Weights<'_>,
        [input, skip, bias]: [&str; 3],
        prefix: &str,
        eps: f32,
    ) -> Result<String, String> {
        let gamma = self.weight(
            &format!("{prefix}.weight"),
            weights,
            &format!("{prefix}.weight"),
        )?;
        let beta = self.weight(
            &format!("{prefix}.bias"),
            weights,
            &format!("{prefix}.bias"),
        )?;
        Ok(self.contrib(
            "SkipLayerNormalization",
            &[input, skip, &gamma, &beta, bias],
            &[Attr::Float("epsilon", eps)],
        ))
    }

    fn model(self, hidden: usize) -> Vec<u8> {
        let size: usize = self.initializers.iter().map(Message::len).sum();
        let mut graph = Message::with_capacity(size + (1 << 20));
        for n in &self.nodes {
            graph.message(1, n);
        }
        graph.string(2, "bert_sentence_encoder");
        // Each initializer is freed once copied: the model's bytes are the largest thing
        // held while a model loads.
        for t in self.initializers {
            graph.message(5, &t);
        }
        let tokens = [Dim::Param("batch"), Dim::Param("tokens")];
        graph.message(11, &value_info(INPUT_IDS, INT64, &tokens));
        graph.message(11, &value_info(ATTENTION_MASK, INT64, &tokens));
        let pooled = [Dim::Param("batch"), Dim::Value(hidden as i64)];
        graph.message(12, &value_info(POOLED, FLOAT, &pooled));
        let mut opset = Message::new();
        opset.string(1, "").int(2, OPSET);
        let mut contrib = Message::new();
        contrib.string(1, CONTRIB).int(2, 1);
        let mut model = Message::with_capacity(size + (2 << 20));
        model
            .int(1, IR_VERSION)
            .string(2, "codesearch")
            .message(7, &graph)
            .message(8, &opset)
            .message(8, &contrib);
        model.into_bytes()
    }
}

enum Dim<'a> {
    Value(i64),
    Param(&'a str),
}

/// A graph input or output: name, element type and shape.
fn value_info(name: &str, elem_type: i64, dims: &[Dim<'_>]) -> Message {
    let mut shape = Message::new();
    for dim in dims {
        let mut d = Message::new();
        match dim {
            Dim::Value(v) => d.int(1, *v),
            Dim::Param(p) => d.string(2, p),
        };
        shape.message(1, &d);
    }
    let mut tensor = Message::new();
    tensor.int(1, elem_type).message(2, &shape);
    let mut ty = Message::new();
    ty.message(1, &tensor);
    let mut info = Message::new();
    info.string(1, name).message(2, &ty);
    info
}
