#!/usr/bin/env bash
# Build the sandbox image without any container registry (run as root, dockerd running):
# a minimal Debian root filesystem from the apt mirror configured on this machine
# (debootstrap --variant=minbase --include=python3,python3-venv) plus the sandbox lock's wheels (downloaded
# on this machine, installed into /opt/kramabench), piped into `docker import`.
# Same as: python -m kramabench sandbox build --offline [--if-missing] [--tag NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v debootstrap >/dev/null || { echo "build-offline.sh: apt-get install debootstrap" >&2; exit 1; }
docker info >/dev/null 2>&1 || bash scripts/start-dockerd.sh
exec python -m kramabench sandbox build --backend docker --offline "$@"
