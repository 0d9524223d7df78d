//! Shared test support: runs the real `floe` binary as a child process on loopback.
#![allow(dead_code)]

pub mod haproxy;
pub mod kafka;
pub mod proxy;
pub mod raw;
pub mod s3;
pub mod tenants;
pub mod wall_clocks;
pub mod workload;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// For `Floe::start` with no extra flags.
pub const NO_FLAGS: &[&str] = &[];

pub struct Floe {
    child: Child,
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    pub data_dir: PathBuf,
    /// The extra flags it was started with (a restart reuses them).
    extra: Vec<std::ffi::OsString>,
    /// The environment `configure` set (a restart sets it again).
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

/// A port that is free now, chosen below the kernel's ephemeral range (32768 and up on
/// Linux): a port picked here is bound later by a child process, and in between an outgoing
/// connection could otherwise take it as its local port. A port is handed out once per test
/// process, so tests running in parallel never pick the same one.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|p| p.into_inner());
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
        ^ (u64::from(std::process::id()) << 32)
        ^ CALLS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut x = seed;
    for _ in 0..1_000 {
        // SplitMix64 step: a different candidate per call and per process.
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let port = (20_000 + (z ^ (z >> 31)) % 12_000) as u16;
        if !handed_out.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            handed_out.push(port);
            return port;
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local addr").port()
}

pub fn free_addr() -> SocketAddr {
    format!("127.0.0.1:{}", free_port()).parse().expect("addr")
}

impl Floe {
    /// Starts `floe serve` on a fresh port with the given data directory and extra flags.
    pub fn start<S: AsRef<std::ffi::OsStr>>(data_dir: &Path, extra: &[S]) -> Floe {
        Floe::start_at(data_dir, free_addr(), free_addr(), extra)
    }

    /// Starts `floe serve` on the given Kafka and admin addresses (a restart keeps them).
    pub fn start_at<S: AsRef<std::ffi::OsStr>>(
        data_dir: &Path,
        addr: SocketAddr,
        admin: SocketAddr,
        extra: &[S],
    ) -> Floe {
        Floe::start_configured(data_dir, addr, admin, extra, |_| {})
    }

    /// `start_at`, with `configure` changing the command before it runs (its environment,
    /// say; the test keys are set first). A restart sets the same environment again.
    pub fn start_configured<S: AsRef<std::ffi::OsStr>>(
        data_dir: &Path,
        addr: SocketAddr,
        admin: SocketAddr,
        extra: &[S],
        configure: impl FnOnce(&mut Command),
    ) -> Floe {
        // Appends: a restarted node's log follows its first life's.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data_dir.with_extension("log"))
            .expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_floe"));
        command
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--kafka-addr")
            .arg(addr.to_string())
            .arg("--admin-addr")
            .arg(admin.to_string())
            .args(extra)
            // `FLOE_TEST_LOG` (say `info,floe::groups=debug`) for a closer look at a failure.
            .env(
                "FLOE_LOG",
                std::env::var("FLOE_TEST_LOG").unwrap_or("info".into()),
            )
            .env("AWS_ACCESS_KEY_ID", s3::ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", s3::SECRET_KEY)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .stdin(Stdio::null());
        configure(&mut command);
        let env = command
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_os_string(), v?.to_os_string())))
            .collect();
        let child = command.spawn().expect("spawn floe");
        let mut floe = Floe {
            child,
            addr,
            admin,
            data_dir: data_dir.to_path_buf(),
            extra: extra.iter().map(|e| e.as_ref().to_os_string()).collect(),
            env,
        };
        floe.wait_ready();
        floe
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("floe exited during start-up ({status}):\n{}", self.log());
            }
            // The admin listener binds after the Kafka one: a test may ask it at once.
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
                && TcpStream::connect_timeout(&self.admin, Duration::from_millis(200)).is_ok()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("floe did not start listening on {}", self.addr);
    }

    /// The process id of the running broker.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn bootstrap(&self) -> String {
        self.addr.to_string()
    }

    /// SIGKILL: no graceful shutdown, exactly like a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGSTOP: the process freezes (a long GC pause, a stalled VM) and answers nothing.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: a paused process goes on where it stopped.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} {}", self.child.id());
    }

    /// SIGTERM and wait: a graceful stop, after which the log holds the request summary.
    pub fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
    }

    /// SIGTERM, as an orchestrator scaling in sends it: the exit status and how long the
    /// process took to exit (it drains first). Panics if it has not exited within `limit`.
    pub fn terminate(&mut self, limit: Duration) -> (std::process::ExitStatus, Duration) {
        let started = Instant::now();
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        (self.wait_exit(limit), started.elapsed())
    }

    /// Waits for the process to exit on its own; panics if it has not within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("floe did not exit within {limit:?}:\n{}", self.log());
    }

    /// Starts the node again, exited or not, with its addresses, data directory and flags.
    pub fn restart(&mut self) {
        self.kill();
        let extra = std::mem::take(&mut self.extra);
        let env = std::mem::take(&mut self.env);
        *self = Floe::start_configured(
            &self.data_dir.clone(),
            self.addr,
            self.admin,
            &extra,
            |command| {
                command.envs(env);
            },
        );
    }

    /// The "object store requests" summary lines a stopped floe logged.
    pub fn request_summary(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter(|l| l.contains("object store requests"))
            .map(|l| l.split("INFO").last().unwrap_or(l).trim().to_string())
            .collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data_dir.with_extension("log")).unwrap_or_default()
    }
}

impl Drop for Floe {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A plain HTTP/1.0 GET: (status, body).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    http_request(addr, "GET", path, &[], b"")
}

/// One HTTP/1.0 request with the given headers and body: (status, body).
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.0\r\nHost: localhost\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write");
    stream.write_all(body).expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read");
    let response = String::from_utf8_lossy(&response).to_string();
    let (head, body) = response.split_once("\r\n\r\n").expect("HTTP response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    (status, body.to_string())
}

/// Jobs twice a second and small segments: a compacted topic's cleaning passes come in
/// seconds.
pub const FAST_CLEANING: &[&str] = &[
    "--compaction-lag",
    "1s",
    "--compaction-interval",
    "500ms",
    "--segment-bytes",
    "65536",
];

/// GETs a JSON admin view, failing the test on a non-200 answer.
pub fn http_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let (status, body) = http_get(addr, path);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// One sample of an agent's /metrics, by name with labels as printed
/// (`floe_group_lag_records{group="g"}`).
pub fn metric(admin: SocketAddr, sample: &str) -> Option<f64> {
    let (_, text) = http_get(admin, "/metrics");
    text.lines().find_map(|l| {
        l.strip_prefix(sample)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// A group among those an agent coordinates, as its /v1/groups shows it.
pub fn coordinated(admin: SocketAddr, group: &str) -> Option<serde_json::Value> {
    let groups = http_json(admin, "/v1/groups");
    groups["coordinated"]
        .as_array()?
        .iter()
        .find(|g| g["group"] == group)
        .cloned()
}

/// Sends one request straight to a Kafka listener and returns its answer.
pub fn kafka_call(
    addr: &str,
    version: i16,
    request: floe::protocol::messages::RequestBody,
) -> floe::protocol::messages::ResponseBody {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (mut tx, mut rx) = floe::client::connect(addr).await.expect("connect");
        floe::client::call(&mut tx, &mut rx, version, request)
            .await
            .expect("call")
    })
}

/// A temporary directory removed at drop (kept, with the brokers' logs in it, when
/// `FLOE_TEST_KEEP` is set).
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("floe-test-")
        .disable_cleanup(std::env::var_os("FLOE_TEST_KEEP").is_some())
        .tempdir()
        .expect("temp dir")
}

/// Waits until the node whose admin listener is `admin` answers /readyz with 200: its
/// registration is applied (and the object store answers).
pub fn wait_until_ready(admin: SocketAddr) {
    wait_for("/readyz to answer 200", Duration::from_secs(30), || {
        (http_get(admin, "/readyz").0 == 200).then_some(())
    });
}

/// Polls `f` until it returns `Some`, failing with `what` after `limit`.
pub fn wait_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs an external client program and fails the test with its output if it fails.
pub fn run_client(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} (the README test command installs it): {e}")
        });
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{program} {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}
