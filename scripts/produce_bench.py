"""Produce benchmark: librdkafka's own producer against floe in several set-ups, in one run.

Usage:
  python3 scripts/produce_bench.py [--records 1000000] [--size 1024] [--partitions 4]
      [--only NAME[,NAME...]] [--tansu 'tansu broker ... {port} ...'] [--json FILE]

Builds librdkafka from source (scripts/librdkafka_build.sh, cached), a small C producer and
consumer over it (scripts/rdkafka_load.c) and floe in release mode, then starts each broker
as a process on 127.0.0.1 and drives it with one idempotent producer with librdkafka's
default settings (linger.ms 5, batch.size 1 MB, 5 requests in flight per connection, no
compression), sending values round-robin over the topic's partitions. It reports, per set-up:
produce MB/s (10^6 bytes of values per second), the mean delivery latency, the broker's CPU
(user + system seconds of its process) per GB of values ingested, the object-store PUTs
floe made and what they are allowed to be (1 per flush interval plus one per
object-bytes-max), and for the set-ups marked "read back" the broker's CPU per GB served to
a consumer reading the fresh records back.

Set-ups (--only picks some):
  embedded        floe's embedded default: fsync'd local objects and Raft log, 5 ms flush
  memory          floe on memory:// (objects in memory), 5 ms flush
  s3-standard     memory:// behind the s3-standard latency model, 250 ms flush
  s3-standard-ids the same with --broker-ids-per-agent 4 (a producer's partitions spread
                  over 4 connections)
  tansu           a Tansu command given with --tansu, {port} standing for its Kafka port
                  (e.g. "tansu broker --storage-engine memory://tansu/
                  --listener-url tcp://127.0.0.1:{port}
                  --advertised-listener-url tcp://127.0.0.1:{port}"); not built here:
                  `cargo install tansu --version 0.6.0 --features dynostore` (its
                  memory:// store needs that feature) takes about 15 minutes on 2 cores.

Numbers depend on the machine: compare the rows of one run, as ratios.
"""
import argparse
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/floe-target"))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the broker exited with status {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port}")


def cpu_seconds(pid):
    """User + system CPU seconds of a process and its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def build():
    librdkafka = subprocess.run(
        [os.path.join(ROOT, "scripts/librdkafka_build.sh")],
        check=True, capture_output=True, text=True).stdout.strip()
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(librdkafka))),
                        "rdkafka_load")
    source = os.path.join(ROOT, "scripts/rdkafka_load.c")
    if not os.path.exists(tool) or os.path.getmtime(tool) < os.path.getmtime(source):
        subprocess.run(["cc", "-O2", "-o", tool, source, f"-I{librdkafka}/src",
                        f"-L{librdkafka}/src", "-lrdkafka", "-lpthread"], check=True)
    subprocess.run(["cargo", "build", "-q", "--release", "--bin", "floe"], check=True,
                   cwd=ROOT, env=dict(os.environ, CARGO_TARGET_DIR=TARGET))
    return tool, os.path.join(librdkafka, "src")


def floe_command(binary, port, admin_port, data_dir, extra):
    return [binary, "serve", "--data-dir", data_dir,
            "--kafka-addr", f"127.0.0.1:{port}", "--admin-addr", f"127.0.0.1:{admin_port}",
            *extra]


SETUPS = {
    "embedded": dict(extra=[], flush_s=0.002),
    "memory": dict(extra=["--object-store", "memory://"], flush_s=0.002),
    "s3-standard": dict(extra=["--object-store", "memory://", "--object-store-latency",
                               "s3-standard", "--flush-interval", "250ms"], flush_s=0.25),
    "s3-standard-ids": dict(extra=["--object-store", "memory://", "--object-store-latency",
                                   "s3-standard", "--flush-interval", "250ms",
                                   "--broker-ids-per-agent", "4"], flush_s=0.25),
}
READ_BACK = {"embedded", "memory"}
OBJECT_BYTES_MAX = 8 * 1024 * 1024


def puts(admin_port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=5).read()
    for line in text.decode().splitlines():
        m = re.match(r'floe_object_store_requests_total\{op="put"\} (\d+)', line)
        if m:
            return int(m.group(1))
    return None


def create_topic(bootstrap, topic, partitions):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
        f.result(60)


def run_setup(name, args, tool, libdir):
    port, admin_port = free_port(), free_port()
    data_dir = tempfile.mkdtemp(prefix=f"produce-bench-{name}-")
    if name == "tansu":
        command = shlex.split(args.tansu.replace("{port}", str(port)))
        flush_s = None
    else:
        setup = SETUPS[name]
        extra = list(setup["extra"])
        if args.floe and "--broker-ids-per-agent" in extra:  # an earlier floe has no lanes
            at = extra.index("--broker-ids-per-agent")
            del extra[at:at + 2]
        command = floe_command(args.floe or os.path.join(TARGET, "release/floe"), port,
                               admin_port, data_dir, extra)
        flush_s = setup["flush_s"]
    log = open(os.path.join(data_dir, "broker.log"), "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=data_dir)
    try:
        wait_for_port(port, proc)
        bootstrap = f"127.0.0.1:{port}"
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, args.partitions)
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        puts_before = puts(admin_port) if flush_s else None
        cpu_before = cpu_seconds(proc.pid)
        out = subprocess.run([tool, "produce", bootstrap, topic, str(args.partitions),
                              str(args.records), str(args.size)],
                             env=env, capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            raise SystemExit(f"{name}: the producer failed: {out.stdout}{out.stderr}")
        produced = json.loads(out.stdout)
        cpu_produce = cpu_seconds(proc.pid) - cpu_before
        row = {
            "setup": name,
            "produce_mb_s": produced["bytes"] / produced["seconds"] / 1e6,
            "latency_mean_ms": produced["latency_mean_ms"],
            "latency_max_ms": produced["latency_max_ms"],
            "broker_cpu_s_per_gb_in": cpu_produce / (produced["bytes"] / 1e9),
            "seconds": produced["seconds"],
        }
        if flush_s:
            made = puts(admin_port) - puts_before
            row["puts"] = made
            row["puts_allowed"] = int(produced["seconds"] / flush_s
                                      + produced["bytes"] / OBJECT_BYTES_MAX) + 1
        if name in READ_BACK:
            cpu_before = cpu_seconds(proc.pid)
            out = subprocess.run([tool, "consume", bootstrap, topic, str(args.partitions),
                                  str(args.records)],
                                 env=env, capture_output=True, text=True, timeout=1800)
            if out.returncode != 0:
                raise SystemExit(f"{name}: the consumer failed: {out.stdout}{out.stderr}")
            consumed = json.loads(out.stdout)
            row["consume_mb_s"] = consumed["bytes"] / consumed["seconds"] / 1e6
            row["broker_cpu_s_per_gb_out"] = ((cpu_seconds(proc.pid) - cpu_before)
                                              / (consumed["bytes"] / 1e9))
        return row
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        subprocess.run(["rm", "-rf", data_dir])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--only", default="")
    parser.add_argument("--tansu", default="")
    parser.add_argument("--json", default="")
    parser.add_argument("--floe", default="",
                        help="another floe binary to measure (e.g. an earlier build), "
                             "instead of this checkout's")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(SETUPS)
    if args.tansu and "tansu" not in names:
        names.append("tansu")
    tool, libdir = build()
    rows = []
    for name in names:
        row = run_setup(name, args, tool, libdir)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(f"{args.records} records of {args.size} B, {args.partitions} partitions, one "
          "idempotent librdkafka producer with default settings; "
          f"{os.cpu_count()} cores")
    print("| set-up | produce MB/s | mean latency ms | broker CPU core-s/GB in | "
          "PUTs (allowed) | broker CPU core-s/GB served |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        put = f"{r['puts']} ({r['puts_allowed']})" if "puts" in r else "-"
        served = (f"{r['broker_cpu_s_per_gb_out']:.2f}" if "broker_cpu_s_per_gb_out" in r
                  else "-")
        print(f"| {r['setup']} | {r['produce_mb_s']:.1f} | {r['latency_mean_ms']:.0f} | "
              f"{r['broker_cpu_s_per_gb_in']:.2f} | {put} | {served} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
