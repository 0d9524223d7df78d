"""What TLS and SASL cost a producer: one floe (release build, local object store) with four
listeners; one confluent-kafka producer per listener in turn sends the same records (acks=all,
idempotent), and the script prints throughput, the broker's CPU per GB and the login count,
each listener as a ratio to PLAINTEXT measured in the same run.

    python3 scripts/security_overhead.py [records] [record_bytes]

Certificates are made with openssl into a temporary directory.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import confluent_kafka as ck

sys.path.insert(0, os.path.dirname(__file__))
from floe_local import Broker, free_port, metrics  # noqa: E402


def certificates(d):
    run = lambda *a: subprocess.run(a, cwd=d, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "1", "-subj", "/CN=bench CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "1", "-extfile", "san.ext")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce(conf, topic, records, size):
    p = ck.Producer({**conf, "enable.idempotence": True, "linger.ms": 5, "batch.size": 1_000_000})
    value = b"x" * size
    started = time.time()
    for i in range(records):
        while True:
            try:
                p.produce(topic, value=value)
                break
            except BufferError:
                p.poll(0.01)
    p.flush(120)
    return time.time() - started


def main():
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    with tempfile.TemporaryDirectory() as d:
        certificates(d)
        with open(os.path.join(d, "users"), "w") as f:
            f.write("bench:bench-secret\n")
        ports = {name: free_port() for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
        listeners = ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items())
        broker = Broker(os.path.join(d, "data"), [
            "--listeners", listeners, "--ssl-certificate-file", f"{d}/server.pem",
            "--ssl-key-file", f"{d}/server.key", "--sasl-plain-users-file", f"{d}/users",
            "--default-partitions", "4"], kafka=f"127.0.0.1:{ports['PLAINTEXT']}")
        try:
            results = {}
            for name, port in ports.items():
                conf = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": name}
                if "SSL" in name:
                    conf["ssl.ca.location"] = f"{d}/ca.pem"
                if "SASL" in name:
                    conf.update({"sasl.mechanism": "PLAIN", "sasl.username": "bench",
                                 "sasl.password": "bench-secret"})
                cpu = cpu_seconds(broker.proc.pid)
                seconds = produce(conf, f"bench-{name.lower()}", records, size)
                cpu = cpu_seconds(broker.proc.pid) - cpu
                gb = records * size / 1e9
                results[name] = {"MB_per_s": round(records * size / seconds / 1e6, 1),
                                 "broker_core_s_per_GB": round(cpu / gb, 2)}
            base = results["PLAINTEXT"]
            for r in results.values():
                r["throughput_vs_plaintext"] = round(r["MB_per_s"] / base["MB_per_s"], 2)
                r["cpu_vs_plaintext"] = round(r["broker_core_s_per_GB"] / base["broker_core_s_per_GB"], 2)
            m = metrics(broker.admin)
            results["logins"] = m.get('floe_sasl_authentications_total{mechanism="PLAIN",result="success"}')
            print(json.dumps({"records": records, "record_bytes": size, "results": results}, indent=1))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
