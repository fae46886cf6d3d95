#!/usr/bin/env bash
# What a user who installs kramabench from a package (not from this checkout) gets: builds the sdist and,
# from it, the wheel; installs the wheel into a fresh virtual environment (not editable); runs the main job
# from a folder outside the checkout and fails unless every task scores 100%, and unless the wheel lists
# every bundled suite of the checkout; runs the bundled ELT suite elt-mini the same way. Run by .ci/run after scripts/install.sh (which built the local
# sandbox environment that the installed package uses too).
#
#   bash scripts/check-wheel.sh          (after scripts/install.sh: it builds with kramabench's environment,
#                                         which has the 'build' package, a dev extra; scripts/project-env.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
kb_repo="$repo"
kb_prog="check-wheel"
# shellcheck source=scripts/project-env.sh
. scripts/project-env.sh
kb_resolve_env
if ! "$kb_python" -c 'import build' >/dev/null 2>&1; then
  kb_say "no environment with the 'build' package at $kb_venv: run bash scripts/install.sh first"
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/kramabench-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# the fresh environment of the wheel: from the interpreter a project environment is made from
base_python="$(kb_base_python)"

echo "check-wheel: building the sdist, and the wheel from it" >&2
"$kb_python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }
wheel="$(ls "$work"/dist/kramabench-*.whl)"

echo "check-wheel: installing $(basename "$wheel") into a fresh virtual environment" >&2
"$base_python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" 2>&1 | grep -v "^WARNING: Location" >&2 || true
"$work/venv/bin/python" -m pip show -q kramabench >/dev/null  # installed, or the pip output above says why

mkdir -p "$work/elsewhere"
cd "$work/elsewhere"  # nothing of the checkout is on the path from here
kb="$work/venv/bin/kramabench"
"$kb" --version
"$kb" workloads list --json >"$work/suites.json"
"$work/venv/bin/python" - "$repo/workloads" "$work/suites.json" <<'EOF'
import json, sys
from pathlib import Path

want = sorted(p.name for p in Path(sys.argv[1]).iterdir() if (p / "workload").is_dir() or (p / "suite.yaml").is_file())
suites = json.loads(Path(sys.argv[2]).read_text())["suites"]
have = sorted(s["name"] for s in suites if s["kind"] == "bundled")
site = [s["root"] for s in suites if s["kind"] == "bundled" and "site-packages" not in s["root"]]
if have != want or site:
    sys.exit(f"check-wheel: the wheel's bundled suites are {have} (at {site or 'site-packages'}); the checkout has {want}")
print(f"check-wheel: the wheel carries every bundled suite: {', '.join(have)}")
EOF

echo "check-wheel: kramabench run --workload mini --system reference (from the installed wheel)" >&2
"$kb" run --workload mini --system reference --results "$work/results" --run-id wheel --progress plain
"$work/venv/bin/python" - "$work/results/wheel" <<'EOF'
import json, sys
from pathlib import Path

run = Path(sys.argv[1])
records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines() if line.strip()]
manifest = json.loads((run / "manifest.json").read_text())
expected = sum(c["tasks"] for c in manifest["workload"]["content"].values())
bad = [r["task_id"] for r in records if r["status"] != "ok" or r["score"] != 1.0]
if len(records) != expected or bad or manifest["status"] != "finished":
    sys.exit(f"check-wheel: the main job from the wheel: {len(records)}/{expected} records, status "
             f"{manifest['status']}, not at 100%: {bad}")
if "site-packages" not in manifest["workload"]["root"]:
    sys.exit(f"check-wheel: the run read {manifest['workload']['root']}, not the wheel's bundled workload")
print(f"check-wheel: {len(records)} tasks at 100% from the installed wheel")
EOF

echo "check-wheel: kramabench run --workload elt-mini --system reference (the ELT suite, from the installed wheel)" >&2
"$kb" run --workload elt-mini --system reference --results "$work/results" --run-id wheel-elt --progress plain
"$work/venv/bin/python" - "$work/results/wheel-elt" <<'EOF'
import json, sys
from pathlib import Path

run = Path(sys.argv[1])
records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines() if line.strip()]
manifest = json.loads((run / "manifest.json").read_text())
metrics = {m["key"]: m["numerator"] / m["denominator"] for m in manifest["counts"].get("metrics", []) if m["denominator"]}
bad = [r["task_id"] for r in records if r["status"] != "ok" or r["score"] != 1.0]
if not records or bad or manifest["status"] != "finished" or set(metrics) != {"srdel", "srdt:elt-bench", "srdt:verified"} \
        or any(v != 1.0 for v in metrics.values()):
    sys.exit(f"check-wheel: elt-mini from the wheel: {len(records)} records, status {manifest['status']}, not at 100%: "
             f"{bad}, metrics {metrics}")
if "site-packages" not in manifest["workload"]["root"]:
    sys.exit(f"check-wheel: the run read {manifest['workload']['root']}, not the wheel's bundled suite")
print(f"check-wheel: elt-mini from the installed wheel: {len(records)} pipelines, SRDEL and SRDT (both comparators) 100%")
EOF
