# Sourced (not run) by scripts/install.sh, scripts/pytest.sh and scripts/check-wheel.sh: which Python
# environment kramabench is installed into and run from. One rule, in one place (docs/running.md#installing):
#
#   1. an activated environment is used as it is: $VIRTUAL_ENV (a venv), $CONDA_PREFIX (a conda
#      environment other than base), or a python3 on PATH that is itself a venv's (a venv's bin/ put
#      first on PATH by hand, a pyenv-virtualenv version);
#   2. otherwise the project environment: a venv at $KRAMABENCH_VENV, default <checkout>/.venv, made from
#      $KRAMABENCH_PYTHON, default the python3 (else python) on PATH. This is the case of the system's own
#      Python (Debian 12+, Ubuntu 23.04+ mark it externally managed, PEP 668: pip refuses to install into
#      it, and install.sh never forces it), and of a pyenv, conda base or python.org Python, which stay as
#      they were.
#
# Callers set kb_repo (the checkout) before calling kb_resolve_env, which sets:
#   kb_mode    active | project
#   kb_python  the interpreter to install into / run with (project: <venv>/bin/python, may not exist yet)
#   kb_venv    the environment's folder (sys.prefix of kb_python)

kb_say() { echo "${kb_prog:-kramabench}: $*" >&2; }

# the python of an activated environment, or nothing
kb_active_python() {
  if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    echo "$VIRTUAL_ENV/bin/python"
    return 0
  fi
  if [ -n "${CONDA_PREFIX:-}" ] && [ "${CONDA_DEFAULT_ENV:-base}" != "base" ] && [ -x "$CONDA_PREFIX/bin/python" ]; then
    echo "$CONDA_PREFIX/bin/python"
    return 0
  fi
  local py
  py="$(command -v python3 || command -v python || true)"
  [ -n "$py" ] || return 0
  # a venv's interpreter first on PATH without activation: its sys.prefix differs from its base prefix
  "$py" -c 'import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)' >/dev/null 2>&1 || return 0
  "$py" -c 'import os, sys; print(os.path.join(sys.prefix, "bin", "python"))'
}

kb_resolve_env() {
  local active
  active="$(kb_active_python)"
  if [ -n "$active" ]; then
    kb_mode=active
    kb_python="$active"
    kb_venv="$(cd "$(dirname "$active")/.." && pwd)"
  else
    kb_mode=project
    kb_venv="${KRAMABENCH_VENV:-$kb_repo/.venv}"
    case "$kb_venv" in /*) ;; *) kb_venv="$(pwd)/$kb_venv" ;; esac
    kb_python="$kb_venv/bin/python"
  fi
}

# the interpreter a project environment is made from (resolved to the real executable), or an error
kb_base_python() {
  local py="${KRAMABENCH_PYTHON:-}"
  if [ -z "$py" ]; then
    py="$(command -v python3 || command -v python || true)"
  elif [ "${py#*/}" = "$py" ]; then
    py="$(command -v "$py" || true)"
  fi
  if [ -z "$py" ] || [ ! -x "$py" ]; then
    kb_say "no Python found (python3 on PATH, or KRAMABENCH_PYTHON); Debian/Ubuntu: apt-get install python3"
    return 1
  fi
  "$py" -c 'import sys; print(sys.executable)'
}
