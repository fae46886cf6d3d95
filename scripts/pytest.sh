#!/usr/bin/env bash
# The test suite in kramabench's Python environment, the one scripts/install.sh installed into
# (scripts/project-env.sh: the activated environment, else the checkout's .venv), as if activated: its
# bin/ first on PATH. Arguments go to pytest:
#
#   bash scripts/pytest.sh                        the whole suite (the README's second command)
#   bash scripts/pytest.sh tests/docs -q -x -n 0  one area
#
# Needs no `python` command on PATH (Debian and Ubuntu ship only python3). A user who is in the docker
# group but whose login predates it (install.sh --all just added them) runs the suite through `sg docker`.
set -euo pipefail
kb_repo="$(cd "$(dirname "$0")/.." && pwd)"
kb_prog="pytest.sh"
# shellcheck source=scripts/project-env.sh
. "$kb_repo/scripts/project-env.sh"

kb_resolve_env
if [ ! -x "$kb_python" ] || ! "$kb_python" -c 'import pytest, kramabench' >/dev/null 2>&1; then
  kb_say "no kramabench test environment at $kb_venv: run bash scripts/install.sh --all first"
  exit 1
fi
if [ "$(id -u)" != "0" ] && [ -z "${KB_PYTEST_SG:-}" ] && [ -S /var/run/docker.sock ] && [ ! -w /var/run/docker.sock ] \
    && command -v sg >/dev/null 2>&1 && getent group docker | cut -d: -f4 | tr ',' '\n' | grep -qx "$(id -un)"; then
  args=""
  for a in "$@"; do args="$args $(printf '%q' "$a")"; done
  exec env KB_PYTEST_SG=1 sg docker -c "exec bash $(printf '%q' "$0")$args"
fi
export VIRTUAL_ENV="$kb_venv"
export PATH="$kb_venv/bin:$PATH"
cd "$kb_repo"
exec "$kb_python" -m pytest "$@"
