#!/usr/bin/env bash
# Install kramabench and what it needs on a fresh Debian machine (run as root, or with sudo available).
#
#   bash scripts/install.sh          python package + bubblewrap + the local sandbox environment (a venv
#                                    of the sandbox lock in the cache folder): enough for the main job
#   bash scripts/install.sh --all    + docker engine (started), the offline sandbox image of the same lock,
#                                    chromium (everything the test suite uses)
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
[ "${1:-}" = "--all" ] && all=1

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh: apt-get install ${missing[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

if command -v apt-get >/dev/null 2>&1; then
  pkgs=(bubblewrap postgresql)
  [ $all = 1 ] && pkgs+=(docker.io debootstrap chromium)
  apt_install "${pkgs[@]}"
else
  echo "install.sh: no apt-get here; install bubblewrap (and docker, chromium for the tests) yourself" >&2
fi

python -m pip install -q --disable-pip-version-check -e ".[dev]"
# the sandbox environment both backends run: once per sandbox lock (reused while the lock is unchanged)
python -m kramabench sandbox build --backend local

if [ $all = 1 ]; then
  bash scripts/start-dockerd.sh
  # the offline image build runs debootstrap, which needs root
  $SUDO "$(command -v python)" -m kramabench sandbox build --backend docker --offline --if-missing
fi
