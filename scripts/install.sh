#!/usr/bin/env bash
# Install kramabench and what it needs on a Debian or Ubuntu machine (run as root, or as a user with sudo:
# it calls sudo itself for the system-wide steps). Safe to run again: what is already there is kept.
#
#   bash scripts/install.sh          bubblewrap (+ python3-venv where missing), the Python environment
#                                    with kramabench (editable) and its dev extra, the local sandbox
#                                    environment (a venv of the sandbox lock in the cache folder, once per
#                                    lock), and the `kramabench` launcher: enough for the main job
#   bash scripts/install.sh --all    + docker engine (started), the offline sandbox image of the same lock,
#                                    chromium (everything the test suite uses)
#
# Which Python environment (scripts/project-env.sh): an activated one (venv, conda) is used as it is;
# otherwise a venv in the checkout, .venv, made from python3 on PATH: the system's own Python is
# externally managed (PEP 668) and is never installed into. For that project environment a launcher
# /usr/local/bin/kramabench runs .venv/bin/kramabench, so that `kramabench ...` works in the same shell
# without activating anything; `bash scripts/pytest.sh` runs the tests in it.
#
# Environment: KRAMABENCH_VENV (the project environment's folder, default <checkout>/.venv),
# KRAMABENCH_PYTHON (the interpreter it is made from, default python3 on PATH), KRAMABENCH_BIN_DIR (where
# the launcher goes, default /usr/local/bin). Everything it changes: docs/running.md#what-installsh-changes
set -euo pipefail
cd "$(dirname "$0")/.."
kb_repo="$(pwd)"
kb_prog="install.sh"
# shellcheck source=scripts/project-env.sh
. scripts/project-env.sh

all=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) kb_say "unknown option $arg (usage: bash scripts/install.sh [--all])"; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
have_apt=0
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 && have_apt=1
apt_updated=0

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    kb_say "apt-get install ${missing[*]}"
    if [ $apt_updated = 0 ]; then
      $SUDO apt-get update -qq
      apt_updated=1
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# 1. system packages: bubblewrap (the local sandbox), postgresql (the ELT sources' server); --all: the test
#    suite's docker engine, debootstrap (the offline image build) and chromium (the report screenshots)
if [ $have_apt = 1 ]; then
  pkgs=(bubblewrap postgresql)
  [ $all = 1 ] && pkgs+=(docker.io debootstrap chromium)
  apt_install "${pkgs[@]}"
else
  kb_say "no apt-get here; install bubblewrap (and docker, chromium for the tests) yourself"
fi

# 2. the Python environment
kb_resolve_env
if [ "$kb_mode" = active ]; then
  kb_say "using the active environment $kb_venv ($("$kb_python" -c 'import platform; print("Python", platform.python_version())'))"
else
  if [ -x "$kb_python" ] && "$kb_python" -c 'import sys' >/dev/null 2>&1; then
    kb_say "project environment $kb_venv ($("$kb_python" -c 'import platform; print("Python", platform.python_version())'), reused)"
  else
    if [ -e "$kb_venv" ] && [ ! -f "$kb_venv/pyvenv.cfg" ]; then
      kb_say "$kb_venv exists and is not a virtual environment; move it away or set KRAMABENCH_VENV"
      exit 1
    fi
    base="$(kb_base_python)"
    read -r ver managed < <("$base" -c '
import os, sys, sysconfig
ok = sys.version_info >= (3, 10)
marker = os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
print(f"{sys.version_info[0]}.{sys.version_info[1]}", "yes" if marker else "no")')
    case "$ver" in
      3.[0-9]) kb_say "$base is Python $ver; kramabench needs 3.10 or newer (set KRAMABENCH_PYTHON)"; exit 1 ;;
    esac
    note=""
    [ "$managed" = yes ] && note="; externally managed, PEP 668: never installed into"
    kb_say "making the project environment $kb_venv from $base (Python $ver$note)"
    # Debian/Ubuntu's python3 has no ensurepip (so no venv with pip) without python3.X-venv
    if ! "$base" -c 'import ensurepip' >/dev/null 2>&1; then
      if [ $have_apt = 1 ] && [ "${base#/usr/bin/}" != "$base" ]; then
        apt_install "python$ver-venv"
      else
        kb_say "$base cannot make a virtual environment with pip (no ensurepip); install its venv support"
        exit 1
      fi
    fi
    [ -e "$kb_venv" ] && kb_say "the environment at $kb_venv does not start: making it again"
    rm -rf "$kb_venv"
    "$base" -m venv "$kb_venv"
  fi
fi

# 3. kramabench (editable) with the dev extra, unless this environment already has this checkout's install
#    of the same pyproject.toml/setup.py (a stamp in the environment, and the editable install's origin)
stamp_check='
import hashlib, json, sys, importlib.metadata as md
from pathlib import Path
repo = Path(sys.argv[1]).resolve()
want = {"repo": str(repo), "extras": "dev", "python": sys.version,
        "sha256": hashlib.sha256(b"".join((repo / f).read_bytes() for f in ("pyproject.toml", "setup.py"))).hexdigest()}
stamp = Path(sys.prefix) / ".kramabench-install.json"
if sys.argv[2] == "write":
    stamp.write_text(json.dumps(want) + "\n")
    sys.exit(0)
try:
    url = json.loads(md.distribution("kramabench").read_text("direct_url.json") or "{}")
    have = json.loads(stamp.read_text())
except (md.PackageNotFoundError, OSError, ValueError):
    sys.exit(1)
sys.exit(0 if have == want and url.get("url") == repo.as_uri() and url.get("dir_info", {}).get("editable") else 1)
'
if "$kb_python" -I -c "$stamp_check" "$kb_repo" check >/dev/null 2>&1; then
  kb_say "kramabench[dev] from $kb_repo: up to date"
else
  kb_say "pip install -e .[dev] into $kb_venv"
  # (without the lines of a pip.conf's extra index folders that do not exist: noise, not a problem)
  "$kb_python" -m pip install -q --disable-pip-version-check -e ".[dev]" \
    2> >(grep -v "^WARNING: Location 'file:" >&2 || true)
  "$kb_python" -I -c "$stamp_check" "$kb_repo" write
fi
# pyenv's shims (a pyenv-virtualenv environment) learn the new `kramabench` command
if [ "$kb_mode" = active ] && command -v pyenv >/dev/null 2>&1; then
  case "$kb_python" in "$(pyenv root 2>/dev/null)"/*) pyenv rehash 2>/dev/null || true ;; esac
fi

# 4. the sandbox environment both backends run: once per sandbox lock (reused while the lock is unchanged)
"$kb_python" -m kramabench sandbox build --backend local >/dev/null

# 5. the `kramabench` command for the project environment: a launcher on PATH (the venv stays unactivated)
if [ "$kb_mode" = project ]; then
  bin_dir="${KRAMABENCH_BIN_DIR:-/usr/local/bin}"
  launcher="$bin_dir/kramabench"
  tag="kramabench launcher, written by scripts/install.sh"
  q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
  text="#!/bin/sh
# $tag of $kb_repo:
# runs its project environment. Another checkout's install.sh rewrites it; remove it when unused.
kb=$(q "$kb_venv/bin/kramabench")
if [ ! -x \"\$kb\" ]; then
  echo \"kramabench: \$kb is gone (checkout moved or .venv removed): run bash scripts/install.sh in a kramabench checkout\" >&2
  exit 127
fi
exec \"\$kb\" \"\$@\""
  if [ -e "$launcher" ] && ! grep -qF "$tag" "$launcher" 2>/dev/null; then
    kb_say "$launcher exists and is not a kramabench launcher: remove it, or set KRAMABENCH_BIN_DIR, or run $kb_venv/bin/kramabench"
    exit 1
  fi
  if [ "$(cat "$launcher" 2>/dev/null)" != "$text" ]; then
    tmp="$(mktemp)"
    printf '%s\n' "$text" >"$tmp"
    chmod 0755 "$tmp"
    if mkdir -p "$bin_dir" 2>/dev/null && [ -w "$bin_dir" ]; then
      mv -f "$tmp" "$launcher"
    else
      $SUDO mkdir -p "$bin_dir"
      $SUDO install -m 0755 "$tmp" "$launcher"
      rm -f "$tmp"
    fi
    kb_say "launcher $launcher -> $kb_venv/bin/kramabench"
  fi
  hash -r
  found="$(command -v kramabench || true)"
  if [ "$found" != "$launcher" ]; then
    case ":$PATH:" in
      *":$bin_dir:"*)
        kb_say "\`kramabench\` on your PATH is $found, which comes before $launcher: remove it, or run $launcher"
        exit 1 ;;
      *) kb_say "$bin_dir is not on your PATH: add it, or run $launcher (or $kb_venv/bin/kramabench)" ;;
    esac
  fi
fi

if [ $all = 1 ]; then
  bash scripts/start-dockerd.sh
  if [ "$(id -u)" != "0" ] && ! id -nG | tr ' ' '\n' | grep -qx docker; then
    # the tests talk to the engine as this user: the docker group (a new login shell has it;
    # scripts/pytest.sh uses it at once through sg)
    if ! getent group docker | cut -d: -f4 | tr ',' '\n' | grep -qx "$(id -un)"; then
      kb_say "adding $(id -un) to the docker group (the engine's socket; as good as root on this machine)"
      $SUDO usermod -aG docker "$(id -un)"
    fi
  fi
  # the offline image build runs debootstrap, which needs root (-H: root's own cache folder, not this user's)
  $SUDO ${SUDO:+-H} "$kb_python" -m kramabench sandbox build --backend docker --offline --if-missing
fi
