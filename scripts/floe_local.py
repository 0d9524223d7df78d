"""What the measurement scripts share: the release binary, free loopback ports, /metrics."""

import os
import socket
import urllib.request

FLOE = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/floe-target")),
                    "release", "floe")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics(admin):
    """An agent's /metrics as {sample with labels: value}."""
    text = urllib.request.urlopen(f"http://{admin}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out
