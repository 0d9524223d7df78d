//! A TCP proxy on loopback that a test can cut: in front of a node's port, it carries every
//! connection both ways until told to cut, then severs the open connections and refuses new
//! ones until healed — a network partition of everything that reaches the node through it.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How often a pump looks at the cut flag while no bytes flow.
const CHECK_EVERY: Duration = Duration::from_millis(50);

pub struct Proxy {
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Bumped at every cut: a connection opened before it is severed.
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
            epoch: Arc::new(AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (cut, epoch, stop) = (proxy.cut.clone(), proxy.epoch.clone(), proxy.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        // The epoch before the flag: a cut between the two reads still
                        // severs this connection.
                        let born = epoch.load(Ordering::SeqCst);
                        if cut.load(Ordering::SeqCst) {
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

    /// The partition heals.
    pub fn heal(&self) {
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
