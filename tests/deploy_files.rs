//! There is no Docker engine in CI, so the deployment files are checked another way: the
//! compose file parses, every file it references exists, and every FLOE_* variable it sets is
//! one that `floe serve` reads.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

#[test]
fn docker_compose_parses_and_references_real_files_and_flags() {
    let script = r#"
import json, sys, yaml
doc = yaml.safe_load(open("docker-compose.yml"))
print(json.dumps(doc))
"#;
    let output = Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3 with PyYAML (the README test command installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let compose = String::from_utf8(output.stdout).expect("utf8");
    for service in [
        "minio",
        "minio-bucket",
        "floe-minio",
        "localstack",
        "floe-localstack",
        "floe-1",
        "floe-2",
        "floe-3",
        "floe-agent-4",
        "floe-agent-5",
        "haproxy",
        "cluster-secret",
        "secure-certificates",
        "floe-secure",
        "secure-users",
    ] {
        assert!(
            compose.contains(&format!("\"{service}\"")),
            "service {service} missing"
        );
    }
    assert!(std::path::Path::new("Dockerfile").exists());
    assert!(std::path::Path::new("localstack/init-s3.sh").exists());
    assert!(std::path::Path::new("deploy/haproxy.cfg").exists());
    assert!(std::path::Path::new("deploy/secure/make-certificates.sh").exists());
    assert!(std::path::Path::new("deploy/secure/make-users.py").exists());

    let help = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["serve", "--help"])
        .output()
        .expect("floe serve --help");
    let help = String::from_utf8_lossy(&help.stdout);
    let mut checked = 0;
    for var in compose.split('"').filter(|w| w.starts_with("FLOE_")) {
        assert!(
            help.contains(var),
            "docker-compose.yml sets {var}, which floe serve does not read"
        );
        checked += 1;
    }
    assert!(
        checked >= 12,
        "expected the floe services' settings, found {checked}"
    );
}
