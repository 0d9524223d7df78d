"""The secure profile's application user: a SCRAM-SHA-512 credential for `app` and ACLs that
let it write and read topics prefixed `app-` in groups prefixed `app-`, set by the super user
over the Kafka API. Clients then connect to localhost:9093 with SASL_SSL, SCRAM-SHA-512,
user `app`, the password in the certs volume's app.password, and its ca.pem."""

import sys
import time

from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType, ScramCredentialInfo,
                                   ScramMechanism, UserScramCredentialUpsertion)

certs = sys.argv[1]
admin_password = open(f"{certs}/plain.users").read().strip().split(":", 1)[1]
app_password = open(f"{certs}/app.password").read().strip()
admin = AdminClient({
    "bootstrap.servers": "floe-secure:9093", "security.protocol": "SASL_SSL",
    "ssl.ca.location": f"{certs}/ca.pem", "sasl.mechanism": "PLAIN",
    "sasl.username": "admin", "sasl.password": admin_password,
})
for attempt in range(60):
    try:
        admin.list_topics(timeout=5)
        break
    except Exception:
        time.sleep(1)
info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
for f in admin.alter_user_scram_credentials([UserScramCredentialUpsertion("app", info, app_password.encode())]).values():
    f.result()
acls = [
    AclBinding(ResourceType.TOPIC, "app-", ResourcePatternType.PREFIXED, "User:app", "*", op, AclPermissionType.ALLOW)
    for op in (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE)
] + [AclBinding(ResourceType.GROUP, "app-", ResourcePatternType.PREFIXED, "User:app", "*", AclOperation.READ, AclPermissionType.ALLOW)]
for f in admin.create_acls(acls).values():
    f.result()
print("user 'app' can now use topics and groups prefixed 'app-' on localhost:9093")
