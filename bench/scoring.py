"""Scoring throughput on the official KramaBench answers: in process and through ``kramabench score``.

    python bench/scoring.py [--data ../shared/kramabench] [--copies 40] [--rounds 5]

Answers: every task and subtask answer of the official domains (archeology, biomedical, environment,
legal: 516 gold answers after errata), each with ``--copies`` predictions (default 40 -> 20,640
answers): the gold itself and perturbations a real system writes (the number as a string, with thousands
separators, rounded, off by 3% or 20%, x100, as a percent, in a one-element list; strings re-cased,
padded, quoted or replaced; lists shuffled, halved, written as a string, one item changed; abstentions,
``null``, wrong types). No judge is given: string_approximate answers that need one come back unscored.

Figures, each measured alternately with its floor in the same run (medians of ``--rounds``):

1. *in process*: ``kramabench.run.predictions.score_workloads`` (what ``kramabench score`` and a run's scoring
   call) on all answers, in answers per second; floor: a plain exact-match loop (``gold == pred``) over
   the same pairs. Target: >= 25,000 answers/s.
2. *CLI*: ``kramabench score --no-tasks --output FILE`` on the same answers (a workload root of the copies
   in a temporary folder, the lakes symlinked), wall time; floor: a plain ``python`` started the same way
   that reads the same workload and predictions files and runs the exact-match loop. Target: < 2 s.
3. the bootstrap of the summary (10,000 resamples) alone, from the scored items.

Exit code 2 when the official data is missing.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import alternate, load_note, median, ratio_line, shared_root  # noqa: E402

DOMAINS = ["archeology", "biomedical", "environment", "legal"]
WORDS = ["Boston", "none of them", "Enterococcus", "Marine", "2019", "n/a"]


# ---- perturbations ---------------------------------------------------------------------------------


def _num_variants(g: float | int, rng: random.Random) -> list:
    x = float(g)
    out = [
        g,
        x,
        str(g),
        f"{x:,.2f}",
        round(x, 2),
        round(x, 1),
        x * 1.03,
        x * 0.8,
        x * 100,
        x / 100,
        f"{x * 100:.1f}%",
        [g],
        f"[{g}]",
        f"  {g} ",
        int(x) if abs(x) < 1e15 else x,
        x + rng.uniform(-1, 1),
        "I don't know",
        None,
        f"about {g}",
        True,
        [g, g],
        {"value": g},
        -x,
        f"${x:,.0f}",
    ]
    return out


def _str_variants(g: str, rng: random.Random) -> list:
    out = [
        g,
        g.upper(),
        g.lower(),
        f"  {g}  ",
        f'"{g}"',
        g.replace(" ", "  "),
        rng.choice(WORDS),
        f"{g}.",
        "I don't know",
        None,
        [g],
        f"['{g}']",
        "",
        "N/A",
        g[: max(1, len(g) // 2)],
        42,
        True,
    ]
    return out


def _list_variants(g: list, rng: random.Random) -> list:
    shuffled = list(g)
    rng.shuffle(shuffled)
    half = shuffled[: max(1, len(g) // 2)]
    changed = list(g)
    if changed:
        i = rng.randrange(len(changed))
        v = changed[i]
        changed[i] = v * 1.5 if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{v}x"
    nums = [v * 1.01 if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in g]
    out = [
        g,
        shuffled,
        half,
        changed,
        nums,
        json.dumps(g),
        str(g),
        str(shuffled),
        g + g[:1],
        [],
        "I don't know",
        None,
        [str(v) for v in g],
        g[:1],
        list(reversed(g)),
        {"answer": g},
    ]
    return out


def perturbations(gold, copies: int, rng: random.Random) -> list:
    """``copies`` predictions for one gold answer: the gold first, then perturbations (cycled)."""
    if isinstance(gold, list):
        base = _list_variants(gold, rng)
    elif isinstance(gold, (int, float)) and not isinstance(gold, bool):
        base = _num_variants(gold, rng)
    else:
        base = _str_variants(str(gold), rng)
    return [copy.deepcopy(base[k % len(base)]) for k in range(copies)]


# ---- the copied workload ---------------------------------------------------------------------------


def build_root(shared: Path, tmp: Path, copies: int, seed: int = 0) -> tuple[Path, Path, int]:
    """A workload root of ``copies`` copies of each official domain (ids suffixed ``~k``; answers after the
    official errata; lakes symlinked) and a predictions file with one perturbation per answer per copy."""
    from kramabench.workload import load_workload

    rng = random.Random(seed)
    root = tmp / "root"
    (root / "workload").mkdir(parents=True)
    preds: list[dict] = []
    n = 0
    for d in DOMAINS:
        wl = load_workload(shared, d)  # errata applied
        raw = json.loads((shared / "workload" / f"{d}.json").read_text(encoding="utf-8"))
        fixed = {t.id: t for t in wl.tasks}
        tasks_out = []
        per_task: list[tuple[dict, list, dict[str, list]]] = []
        for item in raw:
            t = fixed.get(item.get("id"))
            if t is None:
                continue
            item = dict(item, answer=t.answer, answer_type=t.answer_type)
            raw_subs = item.get("subtasks") or []
            if len(raw_subs) != len(t.subtasks):  # the loader dropped or added one: keep what it read
                raw_subs = [{"query": s.query, "step": s.step} for s in t.subtasks]
            # ids and answers as loaded (errata and the loader's id repairs applied)
            item["subtasks"] = [
                dict(r, id=s.id, answer=s.answer, answer_type=s.answer_type)
                for r, s in zip(raw_subs, t.subtasks, strict=True)
            ]
            per_task.append(
                (
                    item,
                    perturbations(t.answer, copies, rng),
                    {s.id: perturbations(s.answer, copies, rng) for s in t.subtasks},
                )
            )
        for k in range(copies):
            for item, main_p, sub_p in per_task:
                tid = f"{item['id']}~{k}"
                new = dict(item, id=tid, subtasks=[dict(s, id=f"{s['id']}~{k}") for s in item["subtasks"]])
                tasks_out.append(new)
                preds.append(
                    {
                        "task_id": tid,
                        "answer": main_p[k],
                        "subtask_answers": {f"{s}~{k}": v[k] for s, v in sub_p.items()},
                    }
                )
                n += 1 + len(sub_p)
        (root / "workload" / f"{d}.json").write_text(json.dumps(tasks_out), encoding="utf-8")
        (root / "data" / d).mkdir(parents=True)
        (root / "data" / d / "input").symlink_to(shared / "data" / d / "input")
    pred_file = tmp / "predictions.jsonl"
    pred_file.write_text("\n".join(json.dumps(p) for p in preds) + "\n", encoding="utf-8")
    return root, pred_file, n


#: the floor of the CLI figure: a plain python started like ``kramabench`` that reads the same files and
#: compares each answer with ``==`` (no parsing, no metric, no summary)
FLOOR_SCRIPT = r"""
import json, sys
root, preds = sys.argv[1], sys.argv[2]
gold = {}
for d in sys.argv[3:]:
    for t in json.load(open(f"{root}/workload/{d}.json", encoding="utf-8")):
        gold[t["id"]] = t.get("answer")
        for s in t.get("subtasks", []):
            gold[s["id"]] = s.get("answer")
hits = n = 0
for line in open(preds, encoding="utf-8"):
    p = json.loads(line)
    n += 1
    hits += gold.get(p["task_id"]) == p.get("answer")
    for k, v in p.get("subtask_answers", {}).items():
        n += 1
        hits += gold.get(k) == v
json.dump({"n": n, "hits": hits}, open(f"{root}/floor.json", "w"))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="the official KramaBench data (default ../shared/kramabench)")
    ap.add_argument("--copies", type=int, default=40, help="predictions per gold answer")
    ap.add_argument("--rounds", type=int, default=5, help="alternated measurements of each figure")
    ap.add_argument("--skip-cli", action="store_true")
    args = ap.parse_args(argv)
    shared = shared_root(args.data)

    from kramabench.run.predictions import read_predictions, score_workloads
    from kramabench.workload import load_workload

    with tempfile.TemporaryDirectory(prefix="kb-bench-scoring-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.perf_counter()
        root, pred_file, n = build_root(shared, tmp, args.copies)
        wls = [load_workload(root, d, errata=False, validate=False) for d in DOMAINS]
        preds, problems = read_predictions(pred_file)
        assert not problems, problems[:3]
        pairs = []
        for wl in wls:
            for t in wl.tasks:
                p = preds[t.id]
                pairs.append((t.answer, p.answer))
                pairs.extend((s.answer, p.subtask_answers[s.id]) for s in t.subtasks)
        assert len(pairs) == n, (len(pairs), n)
        print(
            f"{n:,} answers ({len(pairs) // args.copies} official gold answers x {args.copies} predictions), "
            f"prepared in {time.perf_counter() - t0:.1f} s; {load_note()}"
        )

        # warm-up: first-use imports (nltk for the diagnostics, scipy for the list matching) are not per answer
        items, _, _ = score_workloads(wls, preds)
        n_unscored = sum(1 for i in items if i.unscored)

        cpu: list[float] = []

        def in_process() -> None:
            c0 = time.process_time()
            score_workloads(wls, preds)
            cpu.append(time.process_time() - c0)

        def floor_loop() -> None:
            hits = 0
            for g, p in pairs:
                hits += g == p

        t = alternate({"kramabench": in_process, "floor": floor_loop}, args.rounds)
        rate, floor_rate = n / median(t["kramabench"]), n / median(t["floor"])
        print(f"in process (score_workloads, diagnostics on, no judge; {n_unscored} unscored: need a judge)")
        print(
            "  "
            + ratio_line(
                "answers per second",
                rate,
                floor_rate,
                "plain exact-match loop",
                unit="/s",
                lower_is_better=False,
            )
            + f"  target >= 25,000/s: {'met' if rate >= 25_000 else 'MISSED'}"
        )
        print(
            f"  per CPU second of this process: {n / median(cpu):,.0f}/s (what the wall figure would be on an idle "
            "core)"
        )
        n_items = sum(len(x) for g, p in pairs for x in (g, p) if isinstance(x, list))
        print(f"  list items in these answers: {n_items:,} ({n_items / n:.0f} per answer on average)")

        from kramabench.scorers.stats import summarize

        def boot() -> None:
            summarize(items, n_boot=10_000, seed=0)

        def boot_floor() -> None:
            summarize(items, n_boot=1, seed=0)

        t = alternate({"10,000": boot, "1": boot_floor}, args.rounds)
        print(
            "  "
            + ratio_line(
                "summary with 10,000 bootstrap resamples",
                median(t["10,000"]),
                median(t["1"]),
                "the same summary with 1 resample",
            )
        )

        if not args.skip_cli:
            exe = Path(sys.executable).with_name("kramabench")
            if not exe.exists():
                print(f"error: no kramabench console script beside {sys.executable}", file=sys.stderr)
                return 2
            domain_args = [a for d in DOMAINS for a in ("--domain", d)]
            out_json = tmp / "scores.json"
            cli_cmd = [
                str(exe),
                "score",
                "--workload",
                str(root),
                *domain_args,
                "--predictions",
                str(pred_file),
                "--no-errata",
                "--no-tasks",
                "--output",
                str(out_json),
            ]
            floor_cmd = [sys.executable, "-c", FLOOR_SCRIPT, str(root), str(pred_file), *DOMAINS]

            def cli() -> None:
                r = subprocess.run(cli_cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"kramabench score failed ({r.returncode}): {r.stderr[-2000:]}")

            def cli_floor() -> None:
                subprocess.run(floor_cmd, check=True, capture_output=True)

            t = alternate({"cli": cli, "floor": cli_floor}, args.rounds)
            scored = json.loads(out_json.read_text())
            assert len(scored["items"]) == n, len(scored["items"])
            wall = median(t["cli"])
            print(f"kramabench score --no-tasks --output (subprocess, {n:,} answers)")
            print(
                "  "
                + ratio_line(
                    "wall time",
                    wall,
                    median(t["floor"]),
                    "plain python reading the same files, exact-match loop",
                )
                + f"  target < 2 s: {'met' if wall < 2 else 'MISSED'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
