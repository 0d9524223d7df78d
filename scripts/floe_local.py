"""What the measurement scripts share: the release binary, free loopback ports, /metrics, a
process's memory, a broker process."""

import os
import socket
import subprocess
import time
import urllib.request

# FLOE_BIN picks another build (say, main's, to compare against in the same run).
FLOE = os.environ.get("FLOE_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/floe-target")), "release", "floe")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid):
    """A process's resident memory, in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def metrics(admin):
    """An agent's /metrics as {sample with labels: value}."""
    text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


class Broker:
    """`floe serve` on `data` with `flags`, its log in `data`/floe.log; ready when it answers
    /readyz."""

    def __init__(self, data, flags, kafka=None):
        os.makedirs(data, exist_ok=True)
        self.kafka, self.admin = kafka or f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
        log = open(os.path.join(data, "floe.log"), "a")
        self.proc = subprocess.Popen([FLOE, "serve", "--data-dir", data, "--kafka-addr", self.kafka,
                                      "--admin-addr", self.admin] + flags, stdout=log, stderr=log)
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://{self.admin}/readyz", timeout=0.5)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("floe did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
