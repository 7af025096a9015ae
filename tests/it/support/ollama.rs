//! A local HTTP server that speaks Ollama's documented API (`POST /api/embed`,
//! `GET /api/tags`, `GET /api/version`), errors included, and fails on demand.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use codesearch::embed::HashEmbedder;
use serde_json::{Value, json};

/// How the fake answers `/api/embed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 768-d vectors derived from the input's words.
    Healthy,
    /// 404 `model "…" not found, try pulling it first`; `/api/tags` lists no model.
    ModelMissing,
    /// 500 with an error body.
    ServerError,
    /// 503 for the next N requests, then healthy.
    BusyFor(u32),
    /// Vectors of the wrong length.
    WrongDimension,
    /// Never answers.
    Hang,
    /// Healthy, except that a batch holding an input with the word `poison` gets the 500
    /// Ollama sends when the model produces NaN for an input.
    Poison,
}

#[derive(Default)]
pub struct Log {
    /// Every `input` array received by `/api/embed`.
    pub inputs: Vec<Vec<String>>,
    pub requests: usize,
}

#[derive(Clone)]
struct Shared {
    mode: Arc<Mutex<Mode>>,
    log: Arc<Mutex<Log>>,
}

pub struct FakeOllama {
    pub url: String,
    mode: Arc<Mutex<Mode>>,
    pub log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOllama {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeOllama {
    pub async fn start(mode: Mode) -> Self {
        let shared = Shared {
            mode: Arc::new(Mutex::new(mode)),
            log: Arc::new(Mutex::new(Log::default())),
        };
        let app = Router::new()
            .route("/api/embed", post(embed))
            .route("/api/tags", get(tags))
            .route(
                "/api/version",
                get(|| async { Json(json!({"version": "0.12.6"})) }),
            )
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url: format!("http://{addr}"),
            mode: shared.mode,
            log: shared.log,
            task,
        }
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().expect("lock") = mode;
    }

    pub fn requests(&self) -> usize {
        self.log.lock().expect("lock").requests
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn embed(State(s): State<Shared>, Json(body): Json<Value>) -> Response {
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let inputs: Vec<String> = match &body["input"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => return error(StatusCode::BAD_REQUEST, "invalid input type"),
    };
    let mode = {
        let mut log = s.log.lock().expect("lock");
        log.requests += 1;
        log.inputs.push(inputs.clone());
        let mut mode = s.mode.lock().expect("lock");
        let current = *mode;
        if let Mode::BusyFor(n) = current {
            *mode = if n <= 1 {
                Mode::Healthy
            } else {
                Mode::BusyFor(n - 1)
            };
        }
        current
    };
    let dim = match mode {
        Mode::Healthy => 768,
        Mode::Poison if inputs.iter().any(|t| t.contains("poison")) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "failed to encode response: json: unsupported value: NaN",
            );
        }
        Mode::Poison => 768,
        Mode::WrongDimension => 1024,
        Mode::ModelMissing => {
            return error(
                StatusCode::NOT_FOUND,
                &format!("model \"{model}\" not found, try pulling it first"),
            );
        }
        Mode::ServerError => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "llama runner process has terminated",
            );
        }
        Mode::BusyFor(_) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "server busy, please try again",
            );
        }
        Mode::Hang => {
            std::future::pending::<()>().await;
            unreachable!()
        }
    };
    let hasher = HashEmbedder::new(dim);
    let embeddings: Vec<Vec<f32>> = inputs.iter().map(|t| hasher.embed_one(t)).collect();
    Json(json!({ "model": model, "embeddings": embeddings, "total_duration": 1000, "prompt_eval_count": 8 }))
        .into_response()
}

async fn tags(State(s): State<Shared>) -> Json<Value> {
    let mode = *s.mode.lock().expect("lock");
    let models = if mode == Mode::ModelMissing {
        json!([{ "name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1 }])
    } else {
        json!([
            { "name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest", "size": 274302450 },
            { "name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1 }
        ])
    };
    Json(json!({ "models": models }))
}
