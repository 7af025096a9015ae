//! Secure connections, for real: a nats-server that wants TLS with client certificates and a
//! password, token and NKey users, and PostgreSQL behind TLS checked with `verify-full`.
//! Wrong credentials fail with the server named and the secret nowhere.

use std::time::Duration;

use codesearch::bus::Kind;
use codesearch::bus::client::Client;
use codesearch::config::Config;
use serde_json::Value;

use crate::support::tls::{Certs, PgTlsProxy};
use crate::support::{self, Postgres, nats_with_config};

const NATS_PASSWORD: &str = "nats-pass-5b1e90";
const PG_PASSWORD: &str = "pg-pass-77c3d2";

fn path(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// The error of connecting to NATS with `cfg`, which must fail.
async fn nats_refusal(cfg: &codesearch::config::NatsConfig) -> String {
    match tokio::time::timeout(Duration::from_secs(20), codesearch::bus::connect(cfg)).await {
        Ok(Ok(_)) => panic!("the connection should have been refused"),
        Ok(Err(e)) => e.to_string(),
        Err(_) => panic!("connecting neither failed nor succeeded in 20 s"),
    }
}

/// A search's reply, or `None` while no daemon answers yet.
async fn search(cfg: &Config, query: &str) -> Option<Value> {
    let client = Client::new(cfg);
    let payload = serde_json::to_vec(&serde_json::json!({ "query": query })).expect("json");
    match client.request(Kind::Search, None, payload).await {
        Ok(body) => Some(serde_json::from_slice(&body).expect("reply is JSON")),
        Err(codesearch::bus::client::ClientError::NoDaemon { .. }) => None,
        Err(e) => panic!("search over NATS: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_serves_over_mutual_tls_nats_and_verify_full_postgres() {
    let certs = Certs::generate();

    // PostgreSQL: a password user, reachable only through TLS.
    let pg = Postgres::start_with(&[], |_, data| {
        let hba = data.join("pg_hba.conf");
        let rest = std::fs::read_to_string(&hba).expect("pg_hba.conf");
        std::fs::write(
            &hba,
            format!("host all app 127.0.0.1/32 scram-sha-256\n{rest}"),
        )
        .expect("write pg_hba.conf");
    });
    let db = pg.database().await;
    {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(&db.url).await.expect("admin");
        for sql in [
            format!("CREATE ROLE app LOGIN PASSWORD '{PG_PASSWORD}'"),
            "GRANT ALL ON SCHEMA public TO app".to_owned(),
            "GRANT ALL ON ALL TABLES IN SCHEMA public TO app".to_owned(),
            "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO app".to_owned(),
        ] {
            sqlx::query(&sql).execute(&mut admin).await.expect(&sql);
        }
    }
    let proxy = PgTlsProxy::start(&certs, pg.port).await;
    let db_name = db.url.rsplit('/').next().expect("database name").to_owned();
    let tls_url = |password: &str, ca: &std::path::Path| {
        format!(
            "postgres://app:{password}@127.0.0.1:{}/{db_name}?sslmode=verify-full&sslrootcert={}",
            proxy.port,
            path(ca)
        )
    };

    // NATS: TLS only, client certificates verified, a user with a password.
    let (nats, _conf_dir) = nats_with_config(&format!(
        r#"
        tls {{
          cert_file: "{}"
          key_file: "{}"
          ca_file: "{}"
          verify: true
          timeout: 5
        }}
        authorization {{ users = [ {{ user: "indexer", password: "{NATS_PASSWORD}" }} ] }}
        "#,
        path(&certs.server_cert),
        path(&certs.server_key),
        path(&certs.ca),
    ));

    let mut cfg = support::config(&db, &nats.url);
    cfg.database.url = tls_url(PG_PASSWORD, &certs.ca);
    cfg.nats.user = "indexer".into();
    cfg.nats.password = NATS_PASSWORD.into();
    cfg.nats.tls_ca_file = path(&certs.ca);
    cfg.nats.tls_cert_file = path(&certs.client_cert);
    cfg.nats.tls_key_file = path(&certs.client_key);

    // The daemon indexes and serves through both secured connections.
    let repo = support::repo(&[(
        "src/vault.rs",
        "/// Rotates the signing keys of the vault.\npub fn rotate_signing_keys(vault: &mut Vault) {\n    vault.rotate();\n}\n",
    )]);
    let repos = support::repos(&cfg, &[repo.path()]);
    let mut daemon = support::Serving::start(cfg.clone(), repos);
    let mut found = Value::Null;
    for _ in 0..100 {
        daemon.assert_running().await;
        let reply = search(&cfg, "rotate the vault signing keys").await;
        if let Some(reply) =
            reply.filter(|r| r["results"].as_array().is_some_and(|r| !r.is_empty()))
        {
            found = reply;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(found["success"], true, "{found}");
    assert_eq!(found["results"][0]["filePath"], "src/vault.rs", "{found}");

    // NATS refusals: each names the server, none carries a secret.
    let server = nats.url.trim_start_matches("nats://").to_owned();
    let mut wrong = cfg.nats.clone();
    wrong.password = "wrong-pass-31337".into();
    let e = nats_refusal(&wrong).await;
    assert!(
        e.contains(&server) && !e.contains("wrong-pass-31337"),
        "{e}"
    );
    assert!(e.to_lowercase().contains("authorization"), "{e}");
    let mut no_client_cert = cfg.nats.clone();
    no_client_cert.tls_cert_file.clear();
    no_client_cert.tls_key_file.clear();
    let e = nats_refusal(&no_client_cert).await;
    assert!(e.contains(&server) && !e.contains(NATS_PASSWORD), "{e}");
    let mut untrusted = cfg.nats.clone();
    untrusted.tls_ca_file = path(&certs.other_ca);
    let e = nats_refusal(&untrusted).await;
    assert!(e.contains(&server) && !e.contains(NATS_PASSWORD), "{e}");
    let mut missing = cfg.nats.clone();
    missing.tls_ca_file = "/nonexistent/ca.pem".into();
    let e = nats_refusal(&missing).await;
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");

    // PostgreSQL refusals: the same rules.
    let refusal = |url: String| {
        let mut c = cfg.database.clone();
        c.url = url;
        async move {
            match codesearch::store::Store::connect(&c).await {
                Ok(_) => panic!("PostgreSQL should have refused {c:?}"),
                Err(e) => e.to_string(),
            }
        }
    };
    let e = refusal(tls_url("wrong-pass-424242", &certs.ca)).await;
    assert!(
        e.contains(&format!("127.0.0.1:{}", proxy.port)) && !e.contains("wrong-pass-424242"),
        "{e}"
    );
    assert!(e.contains("password"), "{e}");
    let e = refusal(tls_url(PG_PASSWORD, &certs.other_ca)).await;
    assert!(!e.contains(PG_PASSWORD), "{e}");
    let e =
        refusal(tls_url(PG_PASSWORD, &certs.ca).replace("sslmode=verify-full", "sslmode=disable"))
            .await;
    assert!(
        e.contains("TLS connections only") && !e.contains(PG_PASSWORD),
        "{e}"
    );

    // The password from a secret file (Docker and Kubernetes secrets), not from the URL.
    let secret_dir = tempfile::tempdir().expect("temp dir");
    let password_file = secret_dir.path().join("postgres_password");
    std::fs::write(&password_file, format!("{PG_PASSWORD}\n")).expect("write secret");
    let mut from_file = cfg.database.clone();
    from_file.url = tls_url(PG_PASSWORD, &certs.ca).replace(&format!(":{PG_PASSWORD}@"), "@");
    from_file.password_file = path(&password_file);
    codesearch::store::Store::connect(&from_file)
        .await
        .expect("password from the file");
    let mut both = from_file.clone();
    both.url = tls_url(PG_PASSWORD, &certs.ca);
    let e = match codesearch::store::Store::connect(&both).await {
        Ok(_) => panic!("a password in the URL and in a file is refused"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("one place") && !e.contains(PG_PASSWORD), "{e}");

    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_token_and_nkey_users() {
    // A token, in the configuration or in the URL.
    let (nats, _dir) = nats_with_config(r#"authorization { token: "tok-9f8e7d6c5b" }"#);
    let mut cfg = Config::defaults().expect("defaults").nats;
    cfg.url = nats.url.clone();
    cfg.token = "tok-9f8e7d6c5b".into();
    codesearch::bus::connect(&cfg)
        .await
        .expect("token in the configuration");
    let mut in_url = cfg.clone();
    in_url.token.clear();
    in_url.url = nats.url.replace("nats://", "nats://tok-9f8e7d6c5b@");
    codesearch::bus::connect(&in_url)
        .await
        .expect("token in the URL");
    let mut wrong = cfg.clone();
    wrong.token = "tok-wrong-000111".into();
    let e = nats_refusal(&wrong).await;
    assert!(
        e.contains("authorization") && !e.contains("tok-wrong-000111"),
        "{e}"
    );
    let mut wrong_in_url = in_url.clone();
    wrong_in_url.url = nats.url.replace("nats://", "nats://tok-wrong-000111@");
    let e = nats_refusal(&wrong_in_url).await;
    assert!(e.contains("***@") && !e.contains("tok-wrong-000111"), "{e}");

    // An NKey user, its seed in a file.
    let user = nkeys::KeyPair::new_user();
    let (nats, dir) = nats_with_config(&format!(
        r#"authorization {{ users = [ {{ nkey: "{}" }} ] }}"#,
        user.public_key()
    ));
    let seed_file = dir.path().join("user.nk");
    std::fs::write(&seed_file, user.seed().expect("seed")).expect("write seed");
    let mut cfg = Config::defaults().expect("defaults").nats;
    cfg.url = nats.url.clone();
    cfg.nkey_file = path(&seed_file);
    codesearch::bus::connect(&cfg).await.expect("NKey user");
    let stranger = nkeys::KeyPair::new_user();
    std::fs::write(&seed_file, stranger.seed().expect("seed")).expect("write seed");
    let e = nats_refusal(&cfg).await;
    assert!(e.contains("authorization"), "{e}");
    let seed = stranger.seed().expect("seed");
    assert!(!e.contains(&seed), "{e}");
    std::fs::write(&seed_file, "not a seed").expect("write");
    let e = nats_refusal(&cfg).await;
    assert!(e.contains("does not hold a user seed"), "{e}");
}

/// Secrets in the tree, each unique, so any answer holding one gives itself away.
const SECRETS: &[&str] = &[
    "AKIAQX3LDW6TZEJ4RM5P",
    "q8Xl2mR7vTz1kPb9sYw3nHc6dFg0jUe5aLo4iKr2",
    "Tr0ub4dor-3x",
    "sk_live_51Hx8KqLm2Np4Rt6Vx8Zb0Dc",
    "MIIEpAIBAAKCAQEA1x8kY2fq7Zb9Lw3Xc5VnR2d9kLm4Qx7Tz0bNc5Vw8Yh1Jp6Fs3G",
    "pX4vR8nT2qL6",
    "ghp_R2d9kLm4Qx7Tz0bNc5Vw8Yh1Jp6Fs3Ga2Ue9",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_the_tree_reach_no_answer() {
    let settings = format!(
        "\"\"\"Storage settings for the upload service.\"\"\"\n\
         AWS_ACCESS_KEY_ID = '{}'\n\
         AWS_SECRET_ACCESS_KEY = \"{}\"\n\
         DATABASE_URL = 'postgresql://uploads:{}@db.internal:5432/uploads'\n\
         \n\
         def storage_bucket_for(tenant):\n    \"\"\"The S3 bucket holding a tenant's uploads.\"\"\"\n    return f\"uploads-{{tenant}}\"\n",
        SECRETS[0], SECRETS[1], SECRETS[2]
    );
    let billing = format!(
        "import Stripe from 'stripe';\n\n\
         // Charges a customer's card through Stripe.\n\
         export function chargeCustomerCard(amount: number) {{\n  const stripe = new Stripe(\"{}\");\n  return stripe.charges.create({{ amount }});\n}}\n\n\
         const SIGNING_KEY = `-----BEGIN RSA PRIVATE KEY-----\n{}\nq7Zb9Lw3Xc5Vn\n-----END RSA PRIVATE KEY-----`;\n",
        SECRETS[3], SECRETS[4]
    );
    let files = [
        ("uploads/settings.py", settings.as_str()),
        ("billing/charge.ts", billing.as_str()),
        // A secret file, listed for indexing by its name: still never read.
        (".env", &format!("DATABASE_PASSWORD={}\n", SECRETS[5])),
        (
            "deploy/publish.sh",
            &format!(
                "#!/bin/sh\n# Publishes the release notes to GitHub.\ncurl -H \"Authorization: token {}\" https://api.github.com/repos/acme/app/releases\n",
                SECRETS[6]
            ),
        ),
    ];
    let d = crate::nats_search::Daemon::start_with(&files, |c| {
        c.index.include_file_names.push(".env".into());
    })
    .await;
    let leaks = |reply: &Value| -> Vec<&str> {
        let text = reply.to_string();
        SECRETS
            .iter()
            .copied()
            .filter(|s| text.contains(s))
            .collect()
    };

    for query in [
        "AWS access key for the uploads bucket",
        "database password connection string",
        "charge a customer's card with stripe",
        "RSA private signing key",
        "publish release notes to GitHub token",
        "DATABASE_PASSWORD",
        SECRETS[0],
        SECRETS[3],
    ] {
        for mode in ["hybrid", "lexical", "vector"] {
            let reply = d
                .ask(
                    "agog.codebase.search",
                    serde_json::json!({ "query": query, "mode": mode, "limit": 20 }),
                )
                .await;
            assert_eq!(reply["success"], true, "{reply}");
            assert!(leaks(&reply).is_empty(), "{query} ({mode}): {reply}");
        }
    }
    // The code around the secrets is still found, with the secret blanked.
    let reply = d
        .ask(
            "agog.codebase.search",
            serde_json::json!({ "query": "charge a customer's card with stripe" }),
        )
        .await;
    let hit = reply["results"]
        .as_array()
        .and_then(|r| r.iter().find(|h| h["filePath"] == "billing/charge.ts"))
        .unwrap_or_else(|| panic!("billing/charge.ts found: {reply}"));
    assert!(
        hit["content"]
            .as_str()
            .is_some_and(|c| c.contains("[REDACTED:stripe-key]")),
        "{hit}"
    );

    let reply = d
        .ask(
            "agog.codebase.context",
            serde_json::json!({
                "task": "Rotate the AWS keys, the database password, the Stripe key, the RSA signing key and the GitHub token.",
                "budgetTokens": 8000
            }),
        )
        .await;
    assert_eq!(reply["success"], true, "{reply}");
    assert!(
        reply["block"]
            .as_str()
            .is_some_and(|b| b.contains("[REDACTED:")),
        "{reply}"
    );
    assert!(leaks(&reply).is_empty(), "{reply}");

    for path in [
        "uploads/settings.py",
        "billing/charge.ts",
        "deploy/publish.sh",
    ] {
        let reply = d
            .ask("agog.codebase.file", serde_json::json!({ "path": path }))
            .await;
        assert_eq!(reply["success"], true, "{reply}");
        assert!(leaks(&reply).is_empty(), "{path}: {reply}");
        // Lines still match the file: the function after the key is where it is on disk.
        if path == "billing/charge.ts" {
            let content = reply["content"].as_str().expect("content");
            assert_eq!(
                content.lines().count(),
                billing.lines().count(),
                "{content}"
            );
        }
    }
    let reply = d
        .ask("agog.codebase.file", serde_json::json!({ "path": ".env" }))
        .await;
    assert_eq!(
        reply["success"], false,
        "a secret file is not indexed: {reply}"
    );
    assert!(leaks(&reply).is_empty(), "{reply}");
    d.stop().await;
}
