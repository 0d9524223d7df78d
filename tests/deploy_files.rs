//! There is no Docker engine or Kubernetes in CI, so the deployment files are checked another
//! way: the compose file and the Kubernetes manifests parse, every file they reference exists,
//! every FLOE_* variable and flag they set is one that `floe serve` reads, the probes and the
//! grace period fit the drain; and every metric the Grafana dashboard queries is one a running
//! floe exports.

// These tests drive real processes over real sockets, in real time: the clock and
// randomness seams of the library do not apply to them.
#![allow(clippy::disallowed_methods)]

mod support;
use serde_json::Value;
use std::process::Command;

/// The documents of a YAML file, as JSON.
fn yaml_documents(path: &str) -> Vec<Value> {
    let script =
        format!("import json, yaml\nprint(json.dumps(list(yaml.safe_load_all(open({path:?})))))");
    let output = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 with PyYAML (the README test command installs it)");
    assert!(
        output.status.success(),
        "{path}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn serve_help() -> String {
    let help = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["serve", "--help"])
        .output()
        .expect("floe serve --help");
    String::from_utf8_lossy(&help.stdout).to_string()
}

fn seconds(text: &str) -> u64 {
    text.strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text:?} is not a number of seconds"))
}

#[test]
fn kubernetes_manifests_wire_probes_drain_and_flags_to_floe() {
    let docs = yaml_documents("deploy/kubernetes/floe.yaml");
    let of_kind =
        |kind: &str| -> Vec<&Value> { docs.iter().filter(|d| d["kind"] == kind).collect() };
    let help = serve_help();

    let config = &of_kind("ConfigMap")[0]["data"];
    for (var, _) in config.as_object().expect("config map data") {
        assert!(
            var == "FLOE_LOG_FORMAT" || help.contains(var.as_str()),
            "the ConfigMap sets {var}, which floe serve does not read"
        );
    }
    let drain = seconds(
        config["FLOE_DRAIN_TIMEOUT"]
            .as_str()
            .expect("drain timeout"),
    );
    let admin_port: u64 = config["FLOE_ADMIN_ADDR"]
        .as_str()
        .and_then(|a| a.rsplit(':').next()?.parse().ok())
        .expect("admin port");

    let voters = &of_kind("StatefulSet")[0];
    let agents = &of_kind("Deployment")[0];
    assert_eq!(voters["spec"]["replicas"], 3);
    // The Raft peers are the voters' stable names under their headless Service.
    let peers = config["FLOE_META_PEERS"].as_str().expect("peers");
    let service = voters["spec"]["serviceName"]
        .as_str()
        .expect("service name");
    for ordinal in 0..3 {
        let name = format!(
            "{}={}-{ordinal}.{service}:",
            ordinal + 1,
            voters["metadata"]["name"].as_str().expect("name")
        );
        assert!(peers.contains(&name), "{peers} lacks {name}");
    }
    for workload in [voters, agents] {
        let pod = &workload["spec"]["template"]["spec"];
        let grace = pod["terminationGracePeriodSeconds"]
            .as_u64()
            .expect("grace period");
        assert!(
            grace > drain,
            "grace {grace}s must outlast the {drain}s drain"
        );
        let container = &pod["containers"][0];
        let admin = container["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .find(|p| p["name"] == "admin")
            .expect("an admin port");
        assert_eq!(admin["containerPort"].as_u64(), Some(admin_port));
        assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(container["readinessProbe"]["httpGet"]["port"], "admin");
        assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
        // Every flag the start command passes is one floe serve takes.
        let command = container["command"].to_string();
        for flag in command.split_whitespace().filter(|w| w.starts_with("--")) {
            let flag = flag.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
            assert!(
                help.contains(flag),
                "the start command passes {flag}, which floe serve does not take"
            );
        }
    }
    let hpa = &of_kind("HorizontalPodAutoscaler")[0];
    assert_eq!(hpa["spec"]["scaleTargetRef"]["kind"], "Deployment");
    assert_eq!(
        hpa["spec"]["scaleTargetRef"]["name"],
        agents["metadata"]["name"]
    );
    let kafka = of_kind("Service")
        .into_iter()
        .find(|s| s["spec"]["type"] == "LoadBalancer")
        .expect("a load-balanced Service");
    // The balancer sends to voters and agents alike: every node serves Kafka.
    for workload in [voters, agents] {
        let labels = &workload["spec"]["template"]["metadata"]["labels"];
        for (k, v) in kafka["spec"]["selector"].as_object().expect("selector") {
            assert_eq!(
                &labels[k], v,
                "the Service does not select {}",
                workload["kind"]
            );
        }
    }
    assert_eq!(
        of_kind("PodDisruptionBudget")[0]["spec"]["maxUnavailable"],
        1
    );
}

#[test]
fn every_metric_the_dashboard_queries_is_exported() {
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string("deploy/grafana/floe-dashboard.json").expect("dashboard"),
    )
    .expect("dashboard JSON");
    let exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().expect("expr").to_string())
        .collect();
    let names: std::collections::BTreeSet<String> = exprs
        .iter()
        .flat_map(|e| {
            let re = regex::Regex::new(r"floe_[a-z0-9_]+").expect("regex");
            re.find_iter(e)
                .map(|m| m.as_str().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(names.len() >= 20, "{names:?}");

    // A short load, so that series appearing with traffic appear.
    let dir = support::temp_dir();
    let floe = support::Floe::start(&dir.path().join("node"), support::NO_FLAGS);
    let (p, acks) = support::kafka::producer(&floe.bootstrap(), "none");
    support::kafka::produce(&p, "dashboard", 1, 100, "d");
    support::kafka::flush(&p);
    let acked = acks.by_partition.lock().expect("acks").clone();
    support::kafka::assert_read_back(&floe.bootstrap(), "dashboard", &acked);
    let (_, metrics) = support::http_get(floe.admin, "/metrics");
    let exported: std::collections::BTreeSet<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in &names {
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .filter(|b| exported.contains(b))
            .unwrap_or(name);
        assert!(
            exported.contains(base),
            "the dashboard queries {name}, which floe does not export"
        );
    }
}

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

    let help = serve_help();
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

/// A flag's name, environment variable and default as `floe serve --help` states them.
struct HelpFlag {
    env: String,
    default: Option<String>,
}

fn help_flags(help: &str) -> std::collections::BTreeMap<String, HelpFlag> {
    let mut flags = std::collections::BTreeMap::new();
    let mut current: Option<String> = None;
    let mut text = String::new();
    let mut finish = |name: Option<String>, text: &str| {
        let Some(name) = name else { return };
        let between = |open: &str| {
            text.split(open)
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .map(str::to_string)
        };
        let env = between("[env: ")
            .map(|e| e.trim_end_matches('=').to_string())
            .unwrap_or_default();
        let default = between("[default: ").map(|d| d.trim_matches('"').to_string());
        flags.insert(name, HelpFlag { env, default });
    };
    for line in help.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("--")
            && line.starts_with("      --")
        {
            finish(current.take(), &text);
            text.clear();
            let name = rest.split([' ', '[', '<']).next().unwrap_or_default();
            if name != "help" {
                current = Some(name.to_string());
            }
        } else {
            text.push(' ');
            text.push_str(trimmed);
        }
    }
    finish(current, &text);
    flags
}

/// `8 MiB` → 8388608, `1 MiB + 12` → 1048588, `10000` → 10000; anything else as written.
fn normalized(value: &str) -> String {
    let value = value.trim().trim_matches('`');
    let size = |text: &str| -> Option<u64> {
        let (number, unit) = text.trim().split_once(' ').unwrap_or((text.trim(), "B"));
        let number: u64 = number.parse().ok()?;
        let scale = match unit {
            "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => return None,
        };
        Some(number * scale)
    };
    let total = value
        .split(" + ")
        .map(size)
        .try_fold(0u64, |sum, part| Some(sum + part?));
    total.map_or(value.to_string(), |n| n.to_string())
}

/// The README's configuration tables and `floe serve --help` list the same flags, each with
/// the same environment variable; where the README states a default as a value (not in
/// words), it is the one the binary has.
#[test]
fn the_readme_documents_every_serve_flag_as_the_binary_has_it() {
    let help = help_flags(&serve_help());
    assert!(help.len() > 50, "parsed {} flags from the help", help.len());
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let mut documented = std::collections::BTreeMap::new();
    for row in readme.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let name = cells[0].trim_start_matches("| `--").trim_end_matches('`');
        let env = cells[1].trim_matches('`');
        documented.insert(name.to_string(), (env.to_string(), cells[2].to_string()));
    }
    let undocumented: Vec<&String> = help
        .keys()
        .filter(|f| !documented.contains_key(*f))
        .collect();
    assert!(
        undocumented.is_empty(),
        "README.md has no row for {undocumented:?}"
    );
    let unknown: Vec<&String> = documented
        .keys()
        .filter(|f| !help.contains_key(*f))
        .collect();
    assert!(
        unknown.is_empty(),
        "README.md documents flags floe serve does not have: {unknown:?}"
    );
    for (name, (env, default)) in &documented {
        let flag = &help[name];
        assert_eq!(
            env, &flag.env,
            "--{name}: README says {env}, the binary reads {}",
            flag.env
        );
        // A default written as a value (`30s`, 8 MiB, 10000, `true`) must be the binary's.
        let number = normalized(default);
        let quoted =
            default.starts_with('`') && default.ends_with('`') && default.matches('`').count() == 2;
        let literal = quoted || (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()));
        if literal && let Some(binary) = &flag.default {
            assert_eq!(
                normalized(default),
                normalized(binary),
                "--{name}: README says the default is {default}, the binary's is {binary}"
            );
        }
    }
}
