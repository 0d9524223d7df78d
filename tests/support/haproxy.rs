//! A real haproxy on loopback in front of floe agents, as a cloud load balancer would be:
//! TCP round robin, each agent's health taken from its `/readyz`, and a connection an agent
//! refuses sent to another one.
#![allow(dead_code)]

use super::{Floe, free_addr, free_port, http_json};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Haproxy(Child);

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Three agents behind a haproxy in round robin, each advertising the balancer's address;
/// nodes 1 to `voters` vote in the metadata quorum, the others follow it as learners.
/// `listener(kafka addr, balancer)` gives each node's listener flags.
pub fn behind_haproxy(
    dir: &std::path::Path,
    voters: usize,
    extra: &[String],
    listener: impl Fn(SocketAddr, SocketAddr) -> Vec<String>,
) -> (Vec<Floe>, SocketAddr, Haproxy) {
    behind_haproxy_routed(dir, voters, extra, listener, |raft| raft, |_, _| {})
}

/// `behind_haproxy`, on a shared `file://` store unless `extra` names one, with the other
/// nodes reaching each node's Raft address through `route(its Raft address)` (a proxy the
/// test can cut, say; each node still binds its own, and agents forward group requests to
/// it directly), and `configure(node id, command)` changing each node's command (its
/// environment) for its every start.
pub fn behind_haproxy_routed(
    dir: &std::path::Path,
    voters: usize,
    extra: &[String],
    listener: impl Fn(SocketAddr, SocketAddr) -> Vec<String>,
    mut route: impl FnMut(SocketAddr) -> SocketAddr,
    configure: impl Fn(usize, &mut std::process::Command),
) -> (Vec<Floe>, SocketAddr, Haproxy) {
    let objects = dir.join("objects");
    std::fs::create_dir_all(&objects).expect("objects dir");
    let balancer = free_addr();
    let raft: Vec<SocketAddr> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()).parse().expect("addr"))
        .collect();
    let routed: Vec<SocketAddr> = raft.iter().map(|&addr| route(addr)).collect();
    let peers = (1..=voters)
        .map(|id| format!("{id}={}", routed[id - 1]))
        .collect::<Vec<_>>()
        .join(",");
    let kafka: Vec<_> = (0..3).map(|_| free_addr()).collect();
    let nodes: Vec<Floe> = (1..=3usize)
        .map(|id| {
            let mut flags = vec![
                "--node-id".to_string(),
                id.to_string(),
                "--meta-peers".into(),
                peers.clone(),
                "--default-partitions".into(),
                "6".into(),
            ];
            if !extra.iter().any(|flag| flag == "--object-store") {
                flags.extend([
                    "--object-store".into(),
                    format!("file://{}", objects.display()),
                ]);
            }
            flags.extend(listener(kafka[id - 1], balancer));
            flags.extend(extra.iter().cloned());
            if id > voters {
                flags.extend(["--roles".into(), "agent".into()]);
            }
            if id > voters || routed[id - 1] != raft[id - 1] {
                flags.extend(["--raft-addr".into(), raft[id - 1].to_string()]);
            }
            Floe::start_configured(
                &dir.join(format!("node-{id}")),
                kafka[id - 1],
                free_addr(),
                &flags,
                |command| configure(id, command),
            )
        })
        .collect();

    // Round robin: consecutive connections land on different agents. An agent is in service
    // while its /readyz answers 200 (a draining agent answers 503); a connection it refuses
    // is tried on another agent.
    let servers: String = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                "    server agent-{i} {} check port {} inter 200ms fall 1 rise 2\n",
                n.addr,
                n.admin.port()
            )
        })
        .collect();
    let config = dir.join("haproxy.cfg");
    std::fs::write(
        &config,
        format!(
            "defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 60s\n    \
             timeout server 60s\n    retries 3\n    option redispatch\n\
             frontend kafka\n    bind {balancer}\n    default_backend agents\n\
             backend agents\n    balance roundrobin\n    option httpchk GET /readyz\n{servers}"
        ),
    )
    .expect("haproxy config");
    let haproxy = Haproxy(
        Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy (the README test command installs it)"),
    );

    // Wait until the quorum has a leader and every member, every agent is ready (its copy
    // names the cluster and holds its registration), and the balancer accepts connections.
    let deadline = Instant::now() + Duration::from_secs(30);
    let formed = || {
        let quorum = http_json(nodes[0].admin, "/v1/quorum");
        let members = |role: &str| quorum[role].as_array().map_or(0, Vec::len);
        quorum["leader"].is_u64() && members("voters") + members("learners") == 3
    };
    while !formed() || std::net::TcpStream::connect(balancer).is_err() {
        assert!(Instant::now() < deadline, "cluster did not form");
        std::thread::sleep(Duration::from_millis(100));
    }
    for node in &nodes {
        super::wait_until_ready(node.admin);
    }
    (nodes, balancer, haproxy)
}
