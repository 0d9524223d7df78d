//! A TCP proxy on loopback that a test can cut: in front of a node's port, it carries every
//! connection both ways until told to cut, then severs the open connections and refuses new
//! ones until healed — a network partition of everything that reaches the node through it.
//! It can also refuse only the connections some processes open (it finds which process
//! holds the connecting socket in `/proc`): with one such proxy in front of each node, a
//! test partitions chosen pairs of nodes both ways while each still reaches the others.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a pump looks at the cut flag while no bytes flow.
const CHECK_EVERY: Duration = Duration::from_millis(50);

pub struct Proxy {
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Processes whose connections are refused while the proxy is not cut.
    refused: Arc<Mutex<Vec<u32>>>,
    /// Connections refused for coming from one of `refused`.
    refusals: Arc<AtomicU64>,
    /// Bumped at every cut and `refuse_from`: a connection opened before it is severed.
    epoch: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `target`.
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let proxy = Proxy {
            addr: listener.local_addr().expect("proxy addr"),
            cut: Arc::new(AtomicBool::new(false)),
            refused: Arc::new(Mutex::new(Vec::new())),
            refusals: Arc::new(AtomicU64::new(0)),
            epoch: Arc::new(AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (cut, refused, refusals, epoch, stop) = (
            proxy.cut.clone(),
            proxy.refused.clone(),
            proxy.refusals.clone(),
            proxy.epoch.clone(),
            proxy.stop.clone(),
        );
        let own = proxy.addr;
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, peer)) => {
                        // The epoch before the flags: a cut between the reads still severs
                        // this connection.
                        let born = epoch.load(Ordering::SeqCst);
                        if cut.load(Ordering::SeqCst) {
                            continue;
                        }
                        let refused = refused.lock().expect("refused").clone();
                        if !refused.is_empty() && opened_by_one_of(peer, own, &refused) {
                            refusals.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        if let Ok(server) =
                            TcpStream::connect_timeout(&target, Duration::from_secs(1))
                        {
                            pump_both_ways(client, server, epoch.clone(), born);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        proxy
    }

    /// The partition begins: open connections are severed, new ones refused.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// A partition from the processes `pids` only: their open connections are severed (with
    /// every other, which simply connects again) and new ones refused.
    pub fn refuse_from(&self, pids: &[u32]) {
        *self.refused.lock().expect("refused") = pids.to_vec();
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// How many connections `refuse_from` has refused so far: a test proves with it that
    /// its partition took effect.
    pub fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// The partition heals.
    pub fn heal(&self) {
        self.refused.lock().expect("refused").clear();
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Relaxed);
    }
}

fn pump_both_ways(client: TcpStream, server: TcpStream, epoch: Arc<AtomicU64>, born: u64) {
    // Accepted sockets are blocking on Linux, but say so; and no Nagle delay on small Raft
    // requests.
    for stream in [&client, &server] {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_nodelay(true);
    }
    let pairs = [
        (client.try_clone(), server.try_clone()),
        (server.try_clone(), client.try_clone()),
    ];
    for pair in pairs {
        let (Ok(from), Ok(to)) = pair else { return };
        let epoch = epoch.clone();
        std::thread::spawn(move || pump(from, to, &epoch, born));
    }
}

/// Copies `from` to `to` until either side closes or the proxy is cut, then closes both.
fn pump(mut from: TcpStream, mut to: TcpStream, epoch: &AtomicU64, born: u64) {
    let _ = from.set_read_timeout(Some(CHECK_EVERY));
    let mut buffer = [0u8; 16 * 1024];
    while epoch.load(Ordering::SeqCst) == born {
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

/// Whether one of `pids` holds the socket that connected from `peer` to `own` (a loopback
/// address of this host): the socket's inode from `/proc/net/tcp`, then the process whose
/// descriptors name it. A connection whose owner cannot be found is let through (a test
/// checks with `refusals` that its partition took effect).
fn opened_by_one_of(peer: SocketAddr, own: SocketAddr, pids: &[u32]) -> bool {
    // The table is read in pieces, not atomically: a socket can be missed while others
    // come and go, so look twice.
    let Some(inode) = socket_inode(peer, own).or_else(|| socket_inode(peer, own)) else {
        return false;
    };
    let socket = format!("socket:[{inode}]");
    pids.iter().any(|pid| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|target| target.as_os_str() == socket.as_str())
            })
    })
}

/// The inode of the established IPv4 socket whose local address is `local` and remote address
/// `remote` (the clients under test dial 127.0.0.1 over IPv4, listed in `/proc/net/tcp`).
fn socket_inode(local: SocketAddr, remote: SocketAddr) -> Option<u64> {
    // /proc/net/tcp writes an address as the IPv4 word in host order, in hex, and the port.
    let hex = |addr: SocketAddr| match addr {
        SocketAddr::V4(v4) => Some(format!(
            "{:08X}:{:04X}",
            u32::from_ne_bytes(v4.ip().octets()),
            v4.port()
        )),
        SocketAddr::V6(_) => None,
    };
    let (local, remote) = (hex(local)?, hex(remote)?);
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // State 01 is ESTABLISHED; a closed socket lingering in TIME_WAIT has inode 0.
        let matches = fields.get(1) == Some(&local.as_str())
            && fields.get(2) == Some(&remote.as_str())
            && fields.get(3) == Some(&"01");
        let inode: u64 = fields.get(9)?.parse().ok()?;
        (matches && inode != 0).then_some(inode)
    })
}
