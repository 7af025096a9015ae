//! The other side of the bus: requests to a running daemon, for the CLI and the MCP adapter.
//!
//! A request that names a workspace goes to that workspace's own subject, which every daemon
//! serves whatever `workspaces.plain_subjects` says; one that names none goes to the plain
//! subject (or, when the plain subjects are off, to the default workspace's subject). The
//! connection is made on first use, so a process that never sends a request never connects.

use std::time::Duration;

use bytes::Bytes;
use thiserror::Error;
use tokio::sync::OnceCell;

use super::{Kind, MAX_REQUEST_BYTES, connect};
use crate::config::{Config, NatsConfig, PlainSubjects, redact_url};

/// Why a request got no reply. Each says what is down and what to do.
#[derive(Debug, Clone, Error)]
pub enum ClientError {
    #[error("NATS is not reachable at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("no codesearch daemon answers on {subject}; start one with `codesearch serve`")]
    NoDaemon { subject: String },
    #[error("no reply on {subject} within {secs}s; the daemon may be overloaded or stuck")]
    Timeout { subject: String, secs: u64 },
    #[error("the request on {subject} failed: {message}")]
    Request { subject: String, message: String },
    #[error(
        "the request is {bytes} bytes and a daemon reads at most {max}: send a shorter query or \
         task (a ticket's title and the paragraphs that matter)"
    )]
    TooLarge { bytes: usize, max: usize },
}

/// A client of the daemons' subjects. Cheap to share; connects once.
pub struct Client {
    nats: NatsConfig,
    plain: PlainSubjects,
    default_workspace: String,
    timeout: Duration,
    connection: OnceCell<async_nats::Client>,
}

impl Client {
    pub fn new(config: &Config) -> Self {
        Self {
            nats: config.nats.clone(),
            plain: config.workspaces.plain_subjects,
            default_workspace: config.workspaces.default.clone(),
            timeout: Duration::from_secs(config.nats.request_timeout_secs.max(1)),
            connection: OnceCell::new(),
        }
    }

    /// How long a request waits for its reply.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The subject a request of `kind` for `workspace` goes to.
    pub fn subject(&self, kind: Kind, workspace: Option<&str>) -> String {
        match (workspace, self.plain) {
            (Some(w), _) => kind.workspace_subject(&self.nats, w),
            (None, PlainSubjects::Off) => {
                kind.workspace_subject(&self.nats, &self.default_workspace)
            }
            (None, _) => kind.subject(&self.nats),
        }
    }

    /// The connection, made on first use.
    pub async fn connection(&self) -> Result<&async_nats::Client, ClientError> {
        self.connection
            .get_or_try_init(|| async {
                connect(&self.nats).await.map_err(|e| ClientError::Connect {
                    url: redact_url(&self.nats.url),
                    message: match e {
                        super::BusError::Connect { message, .. } => message,
                        other => other.to_string(),
                    },
                })
            })
            .await
    }

    /// Sends `payload` (a request of [`super::wire`]) and returns the reply's body, error
    /// replies included: those are the daemon's answer, for the caller to read.
    pub async fn request(
        &self,
        kind: Kind,
        workspace: Option<&str>,
        payload: Vec<u8>,
    ) -> Result<Bytes, ClientError> {
        // Said here, before NATS' own "max payload exceeded" (at 1 MiB) or the daemon's
        // `bad_request`, neither of which says what to do.
        if payload.len() > MAX_REQUEST_BYTES {
            return Err(ClientError::TooLarge {
                bytes: payload.len(),
                max: MAX_REQUEST_BYTES,
            });
        }
        let subject = self.subject(kind, workspace);
        let client = self.connection().await?;
        let secs = self.timeout.as_secs();
        let reply = tokio::time::timeout(
            self.timeout,
            client.request(subject.clone(), payload.into()),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            subject: subject.clone(),
            secs,
        })?;
        match reply {
            Ok(message) => Ok(message.payload),
            Err(e) => Err(match e.kind() {
                async_nats::RequestErrorKind::NoResponders => ClientError::NoDaemon { subject },
                async_nats::RequestErrorKind::TimedOut => ClientError::Timeout { subject, secs },
                _ => ClientError::Request {
                    subject,
                    message: e.to_string(),
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_too_large_for_a_daemon_is_refused_before_connecting() {
        // No NATS listens on this port: the refusal must come first, and say what to do.
        let config = Config::load(None, |_| None, &[("nats.url", "nats://127.0.0.1:9".into())])
            .expect("config");
        let client = Client::new(&config);
        let err = client
            .request(Kind::Context, None, vec![b'x'; MAX_REQUEST_BYTES + 1])
            .await
            .expect_err("too large");
        assert!(matches!(err, ClientError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("shorter"), "{err}");
        let err = client
            .request(Kind::Context, None, vec![b'x'; MAX_REQUEST_BYTES])
            .await
            .expect_err("no NATS");
        assert!(matches!(err, ClientError::Connect { .. }), "{err}");
    }
}
