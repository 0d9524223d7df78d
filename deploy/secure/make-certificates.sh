#!/bin/sh
# Makes what the secure profile needs, once, into $1: a CA, a server certificate for
# localhost and floe-secure, the super user's PLAIN password, an application user's SCRAM
# password (set by make-users.py) and the admin API's token.
set -eu
dir=$1
[ -s "$dir/server.pem" ] && exit 0
apk add --no-cache openssl >/dev/null
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 365 -subj "/CN=floe secure profile CA"
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
printf 'subjectAltName=DNS:localhost,DNS:floe-secure,IP:127.0.0.1\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 365 -extfile san.ext
random() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
printf 'admin:%s\n' "$(random)" > plain.users
random > app.password
random > admin.token
chmod 0644 ./*
