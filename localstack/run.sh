#!/usr/bin/env bash
# LocalStack's S3 as a plain process, without Docker: installs LocalStack into a virtualenv
# under ~/.cache/floe-localstack once, then serves S3 on 127.0.0.1 until stopped.
#
#   localstack/run.sh                  install if needed; serve S3 on 127.0.0.1:4566
#   localstack/run.sh --install-only   install if needed, then exit
#   LOCALSTACK_PORT=4570 LOCALSTACK_ROOT=/tmp/ls localstack/run.sh
#                                      another port; LOCALSTACK_ROOT holds the instance's files
#                                      (one per instance: LocalStack wipes its tmp at start and
#                                      stop)
#
# Any access key works (LocalStack does not check them); floe's flags for it:
#   --object-store s3://floe/data --s3-endpoint http://127.0.0.1:4566 --s3-path-style
#   --s3-allow-http --create-bucket
#
# The pins matter: without them LocalStack fails with "No component plugins found" (its plugin
# loader hides the real import errors: cbor2 6, pyOpenSSL 26, an undeclared service_identity).
# OVERRIDE_IN_DOCKER=0 keeps it from writing to /var/lib, /etc and /usr/lib when the machine
# looks like a container. The hypercorn server binds the address asked for (the default one
# binds 0.0.0.0 whatever GATEWAY_LISTEN says); stop it with SIGTERM, and SIGKILL if it has
# not exited after a few seconds (hypercorn sometimes hangs on SIGTERM).
set -euo pipefail

cache=${FLOE_LOCALSTACK_CACHE:-$HOME/.cache/floe-localstack}
port=${LOCALSTACK_PORT:-4566}

# Python 3.13 runs LocalStack 2026.3; 3.11 and 3.12 run 4.13.1 with the same pins.
pick_python() {
  local candidate
  for candidate in python3.13 "$HOME"/.pyenv/versions/3.13*/bin/python3.13; do
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
      echo "$candidate 2026.3.0"
      return
    fi
  done
  for candidate in python3.12 python3.11 python3; do
    if "$candidate" -c 'import sys; assert (3, 11) <= sys.version_info[:2] <= (3, 12)' 2>/dev/null; then
      echo "$candidate 4.13.1"
      return
    fi
  done
  echo "localstack/run.sh: LocalStack needs Python 3.11, 3.12 or 3.13" >&2
  exit 1
}

install() {
  [ -f "$cache/installed" ] && return
  # One installer at a time (instances started together wait for the first to finish).
  mkdir -p "$cache"
  exec 9>"$cache/install.lock"
  flock 9
  if [ -f "$cache/installed" ]; then
    flock -u 9
    return
  fi
  read -r python version < <(pick_python)
  echo "installing LocalStack $version with $python into $cache" >&2
  rm -rf "$cache/venv" "$cache/spec"
  "$python" -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q "localstack-core[base-runtime]==$version" \
    "cbor2<6" "pyopenssl<26" "cryptography<47" service-identity
  # LocalStack's service index, built once and shared by every instance.
  mkdir -p "$cache/spec/usr/lib/localstack"
  OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$cache/spec" "$cache/venv/bin/python" -m localstack.aws.spec
  touch "$cache/installed"
  flock -u 9
}

install
[ "${1:-}" = "--install-only" ] && exit 0

root=${LOCALSTACK_ROOT:-$cache/root-$port}
mkdir -p "$root/usr/lib"
ln -sfn "$cache/spec/usr/lib/localstack" "$root/usr/lib/localstack"
exec env OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$root" GATEWAY_LISTEN="127.0.0.1:$port" \
  GATEWAY_SERVER=hypercorn SERVICES=s3 DNS_ADDRESS=0 SKIP_SSL_CERT_DOWNLOAD=1 DISABLE_EVENTS=1 \
  "$cache/venv/bin/python" -m localstack.runtime.main
