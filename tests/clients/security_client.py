"""Produces and consumes through one secured connection with a real Kafka client, as a test
asks: confluent-kafka (librdkafka) or kafka-python, over SSL, SASL_PLAINTEXT or SASL_SSL with
PLAIN, SCRAM-SHA-256/512 or OAUTHBEARER, with or without a client certificate.

Usage: security_client.py '<json settings>'
  settings: client, bootstrap, protocol, mechanism?, user?, password?, token?, ca?, cert?,
            key?, topic, group?, records, action ("roundtrip", "produce", "consume", "scram")
Prints one JSON line: {"ok": true, "produced": n, "consumed": n} or
{"ok": false, "error": "<the client's error name>", "message": "..."}.
"""

import json
import sys
import time


def confluent(s):
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient

    conf = {"bootstrap.servers": s["bootstrap"], "security.protocol": s["protocol"]}
    if s.get("ca"):
        conf["ssl.ca.location"] = s["ca"]
    if s.get("cert"):
        conf["ssl.certificate.location"] = s["cert"]
        conf["ssl.key.location"] = s["key"]
    if s.get("mechanism"):
        conf["sasl.mechanism"] = s["mechanism"]
    if s.get("mechanism") == "OAUTHBEARER":
        token = s["token"]
        conf["oauth_cb"] = lambda _: (token, time.time() + 300)
    elif s.get("mechanism"):
        conf["sasl.username"] = s["user"]
        conf["sasl.password"] = s["password"]
    errors = []
    conf["error_cb"] = lambda e: errors.append(e)
    topic = s["topic"]
    n = s.get("records", 10)
    produced = consumed = 0
    if s["action"] == "admin":
        # Creates topics and ACL bindings; lists the topics this principal can see.
        from confluent_kafka.admin import NewTopic, AclBinding, ResourceType, ResourcePatternType, AclOperation, AclPermissionType
        admin = AdminClient(conf)
        if s.get("create_topics"):
            for _, f in admin.create_topics([NewTopic(t, 1, 1) for t in s["create_topics"]]).items():
                f.result(timeout=20)
        bindings = [
            AclBinding(ResourceType[b["resource"]], b["name"], ResourcePatternType[b["pattern"]], b["principal"], "*",
                       AclOperation[b["operation"]], AclPermissionType[b["permission"]])
            for b in s.get("acls", [])
        ]
        if bindings:
            for _, f in admin.create_acls(bindings).items():
                f.result(timeout=20)
        listed = sorted(admin.list_topics(timeout=20).topics.keys())
        return {"ok": True, "topics": listed}
    if s["action"] == "scram":
        admin = AdminClient(conf)
        mech = ck.admin.ScramMechanism.SCRAM_SHA_256 if s["scram_mechanism"] == "SCRAM-SHA-256" else ck.admin.ScramMechanism.SCRAM_SHA_512
        info = ck.admin.ScramCredentialInfo(mech, 4096)
        alteration = ck.admin.UserScramCredentialUpsertion(s["scram_user"], info, s["scram_password"].encode())
        for _, f in admin.alter_user_scram_credentials([alteration]).items():
            f.result(timeout=20)
        return {"ok": True}
    if s["action"] in ("roundtrip", "produce"):
        p = ck.Producer({**conf, "enable.idempotence": True, "message.timeout.ms": 15000})
        failures = []

        def delivered(err, _msg):
            nonlocal produced
            if err:
                failures.append(err)
            else:
                produced += 1

        for i in range(n):
            p.produce(topic, value=b"v%d" % i, on_delivery=delivered)
        p.flush(30)
        if failures or produced < n:
            # An authentication failure reaches the error callback; deliveries then time out.
            err = errors[0] if errors else (failures[0] if failures else None)
            return {"ok": False, "error": err.name() if err else "Timeout", "message": str(err), "produced": produced}
    if s["action"] in ("roundtrip", "consume"):
        c = ck.Consumer({**conf, "group.id": s.get("group", "g"), "auto.offset.reset": "earliest"})
        c.subscribe([topic])
        deadline = time.time() + 30
        while consumed < n and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                if errors and errors[-1].fatal():
                    break
                continue
            if m.error():
                c.close()
                return {"ok": False, "error": m.error().name(), "message": str(m.error())}
            consumed += 1
        c.close()
        if consumed < n:
            err = errors[-1] if errors else None
            return {"ok": False, "error": err.name() if err else "Timeout", "message": str(err), "consumed": consumed}
    return {"ok": True, "produced": produced, "consumed": consumed}


def token_provider(token):
    """kafka-python insists on its own base class, which moved between releases."""
    try:
        from kafka.net.sasl.oauth import AbstractTokenProvider
    except ImportError:
        try:
            from kafka.sasl.oauth import AbstractTokenProvider
        except ImportError:
            from kafka.oauth.abstract import AbstractTokenProvider

    class Token(AbstractTokenProvider):
        def token(self):
            return token

    return Token()


def kafka_python(s):
    import kafka
    from kafka.errors import KafkaError

    conf = {"bootstrap_servers": s["bootstrap"], "security_protocol": s["protocol"]}
    if s.get("ca"):
        conf["ssl_cafile"] = s["ca"]
        conf["ssl_check_hostname"] = True
    if s.get("cert"):
        conf["ssl_certfile"] = s["cert"]
        conf["ssl_keyfile"] = s["key"]
    if s.get("mechanism"):
        conf["sasl_mechanism"] = s["mechanism"]
    if s.get("mechanism") == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = token_provider(s["token"])
    elif s.get("mechanism"):
        conf["sasl_plain_username"] = s["user"]
        conf["sasl_plain_password"] = s["password"]
    topic = s["topic"]
    n = s.get("records", 10)
    produced = consumed = 0
    try:
        if s["action"] in ("roundtrip", "produce"):
            p = kafka.KafkaProducer(**conf, acks="all")
            for f in [p.send(topic, b"v%d" % i) for i in range(n)]:
                f.get(timeout=30)
                produced += 1
            p.close()
        if s["action"] in ("roundtrip", "consume"):
            c = kafka.KafkaConsumer(topic, **conf, group_id=s.get("group", "g"), auto_offset_reset="earliest", consumer_timeout_ms=20000)
            for _ in c:
                consumed += 1
                if consumed >= n:
                    break
            c.close()
    except KafkaError as e:
        return {"ok": False, "error": type(e).__name__, "message": str(e)}
    if s["action"] in ("roundtrip", "consume") and consumed < n:
        return {"ok": False, "error": "Timeout", "consumed": consumed}
    return {"ok": True, "produced": produced, "consumed": consumed}


def main():
    s = json.loads(sys.argv[1])
    result = confluent(s) if s["client"] == "confluent" else kafka_python(s)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
