//! Module and component type of a path, from the configured rules.

use globset::{Glob, GlobMatcher};

use crate::config::{ComponentRule, IndexConfig, ModuleRule};

/// Applies `index.module_rules` and `index.component_rules` to relative paths.
#[derive(Debug, Clone)]
pub struct Classifier {
    modules: Vec<ModuleRule>,
    module_from_first_dir: bool,
    components: Vec<(GlobMatcher, String)>,
}

impl Classifier {
    pub fn new(cfg: &IndexConfig) -> Result<Self, globset::Error> {
        let components = cfg
            .component_rules
            .iter()
            .map(|ComponentRule { pattern, component }| {
                Ok((Glob::new(pattern)?.compile_matcher(), component.clone()))
            })
            .collect::<Result<_, globset::Error>>()?;
        Ok(Self {
            modules: cfg.module_rules.clone(),
            module_from_first_dir: cfg.module_from_first_dir,
            components,
        })
    }

    /// `(module, component_type)` of a path relative to its root.
    pub fn classify(&self, rel_path: &str) -> (Option<String>, Option<String>) {
        let module = self
            .modules
            .iter()
            .find(|r| rel_path.starts_with(&r.prefix))
            .map(|r| r.module.clone())
            .or_else(|| {
                let (first, rest) = rel_path.split_once('/')?;
                (self.module_from_first_dir && !rest.is_empty()).then(|| first.to_owned())
            });
        // Globs starting with `**/` should also match at the root: match "/path" too.
        let rooted = format!("/{rel_path}");
        let component = self
            .components
            .iter()
            .find(|(m, _)| m.is_match(rel_path) || m.is_match(&rooted))
            .map(|(_, c)| c.clone());
        (module, component)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn default_rules() {
        let cfg = Config::defaults().expect("defaults");
        let c = Classifier::new(&cfg.index).expect("globs compile");
        assert_eq!(
            c.classify("backend/src/invoice/invoice.service.ts"),
            (Some("backend".into()), Some("service".into()))
        );
        assert_eq!(
            c.classify("user.resolver.ts").1.as_deref(),
            Some("resolver")
        );
        assert_eq!(
            c.classify("db/migrations/001_init.sql").1.as_deref(),
            Some("migration")
        );
        assert_eq!(c.classify("README.md"), (None, Some("docs".into())));
        assert_eq!(c.classify("src/lib.rs"), (Some("src".into()), None));
    }

    #[test]
    fn tests_by_the_conventions_of_several_ecosystems() {
        let cfg = Config::defaults().expect("defaults");
        let c = Classifier::new(&cfg.index).expect("globs compile");
        for path in [
            "src/user.service.spec.ts",
            "src/components/Button.test.tsx",
            "packages/core/e2e/order.e2e-spec.ts",
            "test-d/index.test-d.ts",
            "src/__mocks__/fs.js",
            "cmd/testdata/expected.md",
            "spec/models/user_spec.rb",
            "pkg/server_test.go",
            "tests/test_app.py",
            "tests/it.rs",
            "src/chunk/tests.rs",
            "src/parse_tests.rs",
            "x/__tests__/y.js",
            "spec/lib/parser_spec.rb",
            "lib/parser_spec.rb",
            "spec/ky.js",
            "spec/spec_helper.rb",
            "internal/testing/helpers.go",
            "src/test/java/org/acme/StackTest.java",
            "src/main/java/org/acme/StackTest.java",
            "Acme.Tests/StackTests.cs",
            "Sources/Tests/ParserTests.swift",
            "tests/Unit/RouterTest.php",
            "src/ArenaTest.cc",
            "AFNetworkingTests/AFHTTPSessionManagerTests.m",
            "okio/src/commonTest/kotlin/okio/ByteStringTest.kt",
            "okio/src/jvmTest/kotlin/okio/ZipBuilder.kt",
            "app/src/androidTest/java/com/acme/Helpers.kt",
            "lib/src/testFixtures/java/com/acme/Fakes.java",
            "MyAppTests/Helpers.swift",
        ] {
            assert_eq!(c.classify(path).1.as_deref(), Some("test"), "{path}");
        }
        for (path, component) in [
            ("src/user.service.ts", Some("service")),
            ("docs/testing.md", Some("docs")),
            ("resources/resource_spec.go", None),
            ("resources/page/resource_spec.go", None),
            ("src/latest.ts", None),
            ("src/testament.rs", None),
            ("src/contest.py", None),
            ("latest/x.go", None),
            ("src/attestation.java", None),
            // A specification, not its tests.
            ("spec/Section 1 -- Overview.md", Some("docs")),
            ("src/Contest.java", None),
            ("okio/src/commonMain/kotlin/okio/Buffer.kt", None),
            ("src/latest/index.ts", None),
            (
                "okio-testing-support/src/commonMain/kotlin/okio/FakeClock.kt",
                None,
            ),
        ] {
            assert_eq!(c.classify(path).1.as_deref(), component, "{path}");
        }
    }

    #[test]
    fn module_rules_win_over_first_dir() {
        let mut cfg = Config::defaults().expect("defaults").index;
        cfg.module_rules = vec![ModuleRule {
            prefix: "apps/api/".into(),
            module: "backend".into(),
        }];
        let c = Classifier::new(&cfg).expect("globs compile");
        assert_eq!(c.classify("apps/api/x.ts").0.as_deref(), Some("backend"));
        assert_eq!(c.classify("apps/web/x.ts").0.as_deref(), Some("apps"));
    }
}
