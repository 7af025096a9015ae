//! Credentials written into source, found and blanked before a file's text is chunked, embedded,
//! stored or handed out, so no search, context block or file answer gives them to an agent.
//!
//! What is caught ([`redact`]):
//! - private keys: PEM blocks `-----BEGIN ... PRIVATE KEY-----` (RSA, EC, DSA, OpenSSH, PGP,
//!   encrypted), the body blanked, the armour lines kept;
//! - tokens with a recognisable shape: AWS access key ids (`AKIA...`, `ASIA...`), GitHub
//!   (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Slack (`xox?-`
//!   and webhook URLs), Stripe (`sk_live_`, `rk_test_`...), Google API keys (`AIza...`), OpenAI
//!   and Anthropic keys (`sk-...`, `sk-proj-...`, `sk-ant-...`), npm (`npm_`), PyPI
//!   (`pypi-`), and JSON Web Tokens (`eyJ...`.`eyJ...`.`...`);
//! - passwords in URLs: `scheme://user:password@host` keeps `scheme://user:` and `@host`;
//! - values given to a name that ends in a secret word (`password`, `passwd`, `pwd`, `secret`,
//!   `token`, `api_key`/`apikey`, `access_key`, `secret_key`, `private_key`, `client_secret`,
//!   `credentials`, any case, any prefix: `DB_PASSWORD`, `githubToken`) as a quoted string
//!   literal of 8 or more characters, in any file: `password = "..."`, `"apiKey": "..."`,
//!   `token: '...'`; in configuration files (`.env`, YAML, TOML, INI, properties, shell) the
//!   unquoted value of such a line too (`DB_PASSWORD=...`). Values that are plainly not
//!   secrets stay: references (`${VAR}`, `$VAR`, `{{ var }}`, `%(var)s`, `<password>`),
//!   placeholders (`changeme`, `example`, `your-...`, `xxxxxxxx`, `********`).
//!
//! A secret is replaced by `[REDACTED:<kind>]`. Line breaks are kept, so line numbers still
//! match the file on disk. Whole files that hold secrets (`.env`, key stores...) are not read at
//! all: see `index.secret_files`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// A rule: what it finds, and the capture group to blank (0: the whole match).
struct Rule {
    kind: &'static str,
    regex: Regex,
    group: usize,
}

fn rule(kind: &'static str, pattern: &str, group: usize) -> Rule {
    Rule {
        kind,
        // The patterns are constants, checked by the tests.
        regex: Regex::new(pattern).unwrap_or_else(|e| panic!("secret pattern {kind}: {e}")),
        group,
    }
}

/// The name part of an assignment: an identifier (or quoted key) ending in a secret word.
const SECRET_NAME: &str = r#"(?i:[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|secret_?key|private_?key|client_?secret|credentials?))"#;

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule(
            "private-key",
            r"-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----([\s\S]*?)-----END ",
            2,
        ),
        rule(
            "aws-access-key-id",
            r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
            0,
        ),
        rule(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
            0,
        ),
        rule("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}", 0),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
        rule(
            "slack-webhook",
            r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+",
            0,
        ),
        rule(
            "stripe-key",
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
            0,
        ),
        rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}", 0),
        rule(
            "api-key",
            r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{20,}",
            0,
        ),
        rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", 0),
        rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", 0),
        rule(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            0,
        ),
        rule(
            "url-password",
            r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'"`]+:([^\s@/'"`]+)@"#,
            1,
        ),
        rule(
            "assigned-secret",
            &format!(
                r#"{SECRET_NAME}["'`]?\s*(?::=|=>|=|:)\s*(?:[A-Za-z]*\()?\s*(?:"([^"\s]{{8,}})"|'([^'\s]{{8,}})'|`([^`\s]{{8,}})`)"#
            ),
            1,
        ),
    ]
});

/// A key's body: base64 lines (64 characters in PEM, 70 in OpenSSH's).
static BASE64_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9+/=]{40,}").unwrap_or_else(|e| panic!("base64 pattern: {e}"))
});

/// In configuration files: `NAME=value` or `name: value` unquoted, to the end of the line.
static CONFIG_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?m)^\s*(?:export\s+)?{SECRET_NAME}\s*[:=]\s*([^\s"'#][^\s#]{{7,}})\s*(?:#.*)?$"#
    ))
    .unwrap_or_else(|e| panic!("config assignment pattern: {e}"))
});

/// File types whose lines are `name = value` settings.
fn is_config_file(file_type: &str, rel_path: &str) -> bool {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    name.starts_with(".env")
        || matches!(
            file_type,
            "env" | "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf" | "properties" | "sh" | "bash"
        )
}

/// Whether a value is a reference or placeholder rather than a secret.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    value.contains("${")
        || value.contains("{{")
        || value.contains("%(")
        || value.starts_with(['$', '<', '[', '{', '%', '('])
        || lower.starts_with("your")
        || lower.contains("changeme")
        || lower.contains("change_me")
        || lower.contains("example")
        || lower.contains("placeholder")
        || lower.contains("redacted")
        || matches!(
            lower.as_str(),
            "password" | "passwd" | "pass" | "secret" | "token" | "pwd" | "changeit"
        )
        || value
            .chars()
            .all(|c| c == value.chars().next().unwrap_or(c))
        || value
            .chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
}

/// Whether a value given to a secret-named variable has the shape of a secret rather than of a
/// name, a path or a word: letters with digits or symbols, and not an identifier, a URL, a path
/// or a file name (`"NextToken"`, `"secret_key"`, `"https://.../token"`, `"token.json"` are not).
fn looks_secret(value: &str) -> bool {
    static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+|[a-z]+(?:[A-Z][a-z]*)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)$|\.[A-Za-z]{2,5}$")
            .unwrap_or_else(|e| panic!("identifier pattern: {e}"))
    });
    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
    let digits_or_symbols = value
        .chars()
        .any(|c| c.is_ascii_digit() || "!#$%^&*+=?~@".contains(c));
    letters
        && digits_or_symbols
        && !value.contains("://")
        && !value.starts_with(['/', '.', '~'])
        && !IDENTIFIER.is_match(value)
}

/// `text` with every secret found replaced by `[REDACTED:<kind>]`, and how many were found.
/// Borrowed, at no cost, when there is nothing to redact.
pub fn redact<'a>(text: &'a str, file_type: &str, rel_path: &str) -> (Cow<'a, str>, usize) {
    let mut out: Cow<'a, str> = Cow::Borrowed(text);
    let mut found = 0;
    for r in RULES.iter() {
        if !r.regex.is_match(&out) {
            continue;
        }
        let replaced = r
            .regex
            .replace_all(&out, |c: &Captures<'_>| {
                replace(c, r.group, r.kind, &mut found)
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    if is_config_file(file_type, rel_path) && CONFIG_ASSIGNMENT.is_match(&out) {
        let replaced = CONFIG_ASSIGNMENT
            .replace_all(&out, |c: &Captures<'_>| {
                replace(c, 1, "assigned-secret", &mut found)
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    (out, found)
}

/// The match of `c` with its secret group blanked (or left as it is, for a placeholder or a
/// value already redacted). The rules with alternatives capture the value in the first group
/// that took part.
fn replace(c: &Captures<'_>, group: usize, kind: &str, found: &mut usize) -> String {
    let whole = c.get(0).map_or("", |m| m.as_str());
    let secret = if group == 0 {
        c.get(0)
    } else {
        (group..c.len()).find_map(|g| c.get(g))
    };
    let Some(secret) = secret else {
        return whole.to_owned();
    };
    let value = secret.as_str();
    let keep = match kind {
        // An armour line quoted in code is not a key: a key's body is base64.
        "private-key" => !BASE64_RUN.is_match(value),
        "assigned-secret" => is_placeholder(value) || !looks_secret(value),
        _ => is_placeholder(value),
    };
    if keep || value.contains("[REDACTED:") {
        return whole.to_owned();
    }
    *found += 1;
    let start = c.get(0).map_or(0, |m| m.start());
    let (before, after) = (
        &whole[..secret.start() - start],
        &whole[secret.end() - start..],
    );
    // Keep the line breaks, so lines still match the file.
    let breaks = value.matches('\n').count();
    let marker = if breaks == 0 {
        format!("[REDACTED:{kind}]")
    } else {
        format!("\n[REDACTED:{kind}]{}", "\n".repeat(breaks - 1))
    };
    format!("{before}{marker}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(text: &str, file: &str) -> String {
        let ty = crate::scan::file_type_of(file);
        let (out, _) = redact(text, &ty, file);
        assert_eq!(
            out.matches('\n').count(),
            text.matches('\n').count(),
            "line count kept: {out}"
        );
        out.into_owned()
    }

    #[test]
    fn real_looking_credentials_are_redacted() {
        // Each sample holds its secret once; none of it may survive.
        let samples: &[(&str, &str, &str)] = &[
            (
                "settings.py",
                "AWS_ACCESS_KEY_ID = 'AKIAQX3LDW6TZEJ4RM5P'\n",
                "AKIAQX3LDW6TZEJ4RM5P",
            ),
            (
                "settings.py",
                "AWS_SECRET_ACCESS_KEY = \"q8Xl2mR7vTz1kPb9sYw3nHc6dFg0jUe5aLo4iKr2\"\n",
                "q8Xl2mR7vTz1kPb9sYw3nHc6dFg0jUe5aLo4iKr2",
            ),
            (
                "deploy.sh",
                "curl -H \"Authorization: token ghp_R2d9kLm4Qx7Tz0bNc5Vw8Yh1Jp6Fs3Ga2Ue9\" https://api.github.com\n",
                "ghp_R2d9kLm4Qx7Tz0bNc5Vw8Yh1Jp6Fs3Ga2Ue9",
            ),
            (
                "ci.yml",
                "  GITLAB_TOKEN: glpat-Xy7_kQ2mZp9Lr4Tb8Nc1\n",
                "glpat-Xy7_kQ2mZp9Lr4Tb8Nc1",
            ),
            (
                "notify.js",
                "const hook = 'https://hooks.slack.com/services/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';\n",
                "T0ABC1234/B0DEF5678/q1w2e3r4t5y6u7i8o9p0a1s2",
            ),
            (
                "billing.ts",
                "const stripe = new Stripe(\"sk_live_51Hx8KqLm2Np4Rt6Vx8Zb0Dc\");\n",
                "sk_live_51Hx8KqLm2Np4Rt6Vx8Zb0Dc",
            ),
            (
                "maps.go",
                "const mapsKey = \"AIzaSyD4k9Lm2Qx7Tz0bNc5Vw8Yh1Jp6Fs3Ga2U\"\n",
                "AIzaSyD4k9Lm2Qx7Tz0bNc5Vw8Yh1Jp6Fs3Ga2U",
            ),
            (
                "llm.py",
                "client = OpenAI(api_key=\"sk-proj-4fG7hJ9kL2mN5pQ8rS1tU4vW7xY0zA3b\")\n",
                "sk-proj-4fG7hJ9kL2mN5pQ8rS1tU4vW7xY0zA3b",
            ),
            (
                "claude.ts",
                "const key = 'sk-ant-api03-Zx9Cv8Bn7Mq6Wl5Ek4Rj3Th2Yg1Uf0';\n",
                "sk-ant-api03-Zx9Cv8Bn7Mq6Wl5Ek4Rj3Th2Yg1Uf0",
            ),
            (
                "auth_test.rs",
                "let jwt = \"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\";\n",
                "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ),
            (
                "db.py",
                "engine = create_engine('postgresql://app:Tr0ub4dor-3@db.internal:5432/orders')\n",
                "Tr0ub4dor-3",
            ),
            (
                "config.json",
                "{\n  \"apiKey\": \"9f8e7d6c5b4a39281706f5e4d3c2b1a0\"\n}\n",
                "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            ),
            (
                "mailer.rb",
                "  smtp_password: 'kT9#mQ2$vL7!'\n",
                "kT9#mQ2$vL7!",
            ),
            (
                ".env",
                "DATABASE_PASSWORD=pX4vR8nT2qL6\nPORT=8080\n",
                "pX4vR8nT2qL6",
            ),
            (
                "values.yaml",
                "redis:\n  password: Zq8Wm3Kx7Pn2\n",
                "Zq8Wm3Kx7Pn2",
            ),
            (
                "app.go",
                "\tclientSecret := \"c2VjcmV0LWNsaWVudC12YWx1ZQ\"\n",
                "c2VjcmV0LWNsaWVudC12YWx1ZQ",
            ),
            (
                ".npmrc",
                "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n",
                "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            ),
        ];
        for (file, text, secret) in samples {
            let out = clean(text, file);
            assert!(!out.contains(secret), "{file}: {out}");
            assert!(out.contains("[REDACTED:"), "{file}: {out}");
        }
    }

    #[test]
    fn private_key_bodies_go_and_lines_stay() {
        let text = "fn main() {}\nconst KEY: &str = \"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x8kY2fq7Zb9Lw3Xc5VnR2d9kLm4Qx7Tz0bNc5Vw8Yh1Jp6Fs3G\nq7Zb9Lw3Xc5Vn\n-----END RSA PRIVATE KEY-----\";\nfn after() {}\n";
        let out = clean(text, "keys.rs");
        assert!(!out.contains("MIIEpAIBAAKCAQEA1x8kY2f"), "{out}");
        assert!(!out.contains("q7Zb9Lw3Xc5Vn"), "{out}");
        assert!(out.contains("-----BEGIN RSA PRIVATE KEY-----"), "{out}");
        assert!(out.contains("[REDACTED:private-key]"), "{out}");
        assert_eq!(out.lines().nth(5), Some("fn after() {}"), "{out}");
        let openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n";
        assert!(!clean(openssh, "id.txt").contains("b3BlbnNzaC1rZXktdjEAAAAA"));
        // A key in a string literal with escaped line breaks.
        let escaped = "key = \"-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\\n-----END PRIVATE KEY-----\\n\"\n";
        assert!(!clean(escaped, "k.py").contains("MIGHAgEAMBMGByqGSM49"));
        // Armour lines quoted in code, with no key between them, are code.
        let armour = "START = b\"-----BEGIN OPENSSH PRIVATE KEY-----\"\nEND = b\"-----END OPENSSH PRIVATE KEY-----\"\n";
        assert_eq!(clean(armour, "ssh.py"), armour);
        // A public key or a certificate is not a secret.
        let public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n";
        assert_eq!(clean(public, "pub.txt"), public);
    }

    #[test]
    fn code_that_only_mentions_secrets_is_left_alone() {
        let untouched = [
            ("auth.py", "password = request.form['password']\n"),
            ("auth.py", "token = self.next_token()\n"),
            ("tok.py", "tokenizer = \"bert-base-uncased\"\n"),
            ("tok.py", "eos_token = \"<|endoftext|>\"\n"),
            ("lib.rs", "let password_hash = hash(&password);\n"),
            ("cfg.yaml", "password: ${DB_PASSWORD}\n"),
            ("cfg.yaml", "api_key: your-api-key-here\n"),
            (".env", "SECRET_KEY=changeme-in-production\n"),
            ("settings.py", "SECRET_KEY = os.environ[\"SECRET_KEY\"]\n"),
            (
                "app.ts",
                "const url = `postgres://${user}:${password}@${host}/db`;\n",
            ),
            (
                "setup.py",
                "author_email = \"armin.ronacher@active-4.com\"\n",
            ),
            (
                "doc.md",
                "Set `DATABASE_URL=postgres://user:password@host/db`.\n",
            ),
            ("main.go", "if token == \"\" { return errMissingToken }\n"),
            ("paginators.json", "\"input_token\": \"NextToken\",\n"),
            (
                "oid.py",
                "CHALLENGE_PASSWORD = ObjectIdentifier(\"1.2.840.113549.1.9.7\")\n",
            ),
            ("testutils.py", "'AWS_SECRET_ACCESS_KEY': 'secret_key',\n"),
            (
                "cors.py",
                "ALLOW_CREDENTIALS = \"Access-Control-Allow-Credentials\"\n",
            ),
            (
                "oauth.py",
                "token_url = \"https://oauth2.googleapis.com/token\"\n",
            ),
            ("gcp.py", "credentials_file = \"service_account2.json\"\n"),
            (
                "db.py",
                "url = f\"postgresql://{user}:{password}@{host}/db\"\n",
            ),
            (
                "policy.json",
                "\"IAMUserChangePassword\": \"arn:aws:iam::aws:policy/IAMUserChangePassword\",\n",
            ),
            ("lib.rs", "const MAX_TOKENS: usize = 4096;\n"),
        ];
        for (file, text) in untouched {
            let (out, n) = redact(text, &crate::scan::file_type_of(file), file);
            assert_eq!((out.as_ref(), n), (text, 0), "{file}");
        }
    }

    #[test]
    fn nothing_to_redact_costs_no_copy() {
        let text = "fn add(a: i32, b: i32) -> i32 { a + b }\n";
        assert!(matches!(redact(text, "rs", "a.rs").0, Cow::Borrowed(_)));
    }
}
