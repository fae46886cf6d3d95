"""The markdown report: the same tables as the HTML report, plots linked as SVG files, no code/transcripts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kramabench.contracts.text import md_text
from kramabench.report import fmt
from kramabench.report.compare import MatrixCell
from kramabench.report.environment import KEY_PACKAGES
from kramabench.report.golds import CAPTION as GOLD_CAPTION
from kramabench.report.golds import gold_lines, other_records, record_notes
from kramabench.report.summary import error_kind, record_wall, task_rows, unscored_reason
from kramabench.report.tables import Table, is_unscored, record_value

if TYPE_CHECKING:
    from kramabench.report.model import ReportModel


def _esc(text: object) -> str:
    """Data (a task id, an answer, a run's label) as Markdown text: kramabench.contracts.text.md_text."""
    return md_text(text)


def _table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else ":---:" if a == "c" else "---" for a in align]
    lines = ["| " + " | ".join(_esc(h) for h in header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return lines


def _matrix_md(c: MatrixCell) -> str:
    if not c.present:
        return "–"
    if c.unscored:
        return "U"
    text = fmt.pct(c.value, 0) if c.value is not None else "–"
    return f"{text} E" if c.error else text


def _bold(text: str, on: bool) -> str:
    if not on:
        return text
    head, sep, rest = text.partition(" ")
    return f"**{head}**{sep}{rest}"


def score_table_md(t: Table) -> list[str]:
    k = len(t.key_headers)
    best = t.best_rows()
    rows = [
        [*row.key_cells(k), *(_bold(fmt.cell_text(c), i in best[j]) for j, c in enumerate(row.cells))]
        for i, row in enumerate(t.rows)
    ]
    out = [f"## {_esc(t.title)}", ""]
    out += _table([*t.key_headers, *t.columns], rows, ["l"] * k + ["r"] * len(t.columns))
    if t.caption:
        out += ["", f"_{_esc(t.caption)}_" + (" Bold: the best mean of a column." if any(best) else "")]
    out += [f"- {_esc(n)}" for n in t.notes]
    return [*out, ""]


def golds_md(model: ReportModel) -> list[str]:
    """The headline: each run against the official and the verified gold, beside the floors."""
    if not model.golds:
        return []
    out = ["## Scores: official and verified gold, with floors", "", f"_{_esc(GOLD_CAPTION)}_", ""]
    rows = []
    for rg in model.golds:
        for i, line in enumerate(gold_lines(rg)):
            first = f"{rg.label} ({rg.setting})" if i == 0 else ""
            rows.append([first, line.label, line.official, line.verified])
    out += _table(
        ["Run", "", "Official gold (paper-comparable) %", "Verified gold %"], rows, ["l", "l", "r", "r"]
    )
    notes = [n for rg in model.golds for n in rg.notes]
    out += [""] + [f"- {_esc(n)}" for n in notes] + ([""] if notes else [])
    return out


def render_markdown(model: ReportModel, *, plot_dir: str = "plots") -> str:
    out = ["# KramaBench report", ""]
    out.append(
        f"Generated {model.generated_at:%Y-%m-%d %H:%M UTC} from {len(model.runs)} run(s). "
        "Scores in % with 95% bootstrap intervals. The HTML report (report.html) adds the pipeline code "
        "and transcripts of every task."
    )
    out.append("")
    if model.warnings:
        out += ["> **Warnings while reading the runs**", ">"]
        out += [f"> - {_esc(w)}" for w in model.warnings]
        out.append("")

    out += golds_md(model)
    out += ["## Runs", ""]
    rows = []
    any_unsupported = any(s.n_unsupported for s in model.summaries)
    for s in model.summaries:
        rows.append(
            [
                s.label,
                s.run_id,
                s.workload,
                ", ".join(s.settings) or "–",
                str(s.n_tasks),
                fmt.ci_text(s.score),
                str(s.n_unscored),
                str(s.n_errors),
                *(
                    [
                        str(s.n_unsupported)
                        + (" (left out)" if model.exclude_unsupported and s.n_unsupported else "")
                    ]
                    if any_unsupported
                    else []
                ),
                f"{fmt.tokens(s.prompt_tokens)} / {fmt.tokens(s.completion_tokens)}",
                fmt.money(s.cost_usd, s.n_unpriced_calls),
                fmt.money(s.cost_per_task)
                if s.cost_per_task is not None
                else ("unknown" if s.n_unpriced_calls else "n/a"),
                fmt.duration(s.wall_s),
                fmt.duration(s.elapsed_s),
                s.status,
            ]
        )
    out += _table(
        [
            "Run",
            "Run id",
            "Workload",
            "Settings",
            "Tasks",
            "Score % [95% CI]",
            "Unscored",
            "Errors",
            *(["Unsupported by the benchmark"] if any_unsupported else []),
            "Tokens in / out",
            "Cost",
            "Cost / task",
            "Task time",
            "Elapsed",
            "Status",
        ],
        rows,
        [
            "l",
            "l",
            "l",
            "l",
            "r",
            "r",
            "r",
            "r",
            *(["r"] if any_unsupported else []),
            "r",
            "r",
            "r",
            "r",
            "r",
            "l",
        ],
    )
    out.append("")
    agents = [s for s in model.summaries if s.n_with_steps]
    if agents:
        out += ["Agent steps (final outcomes):", ""]
        out += _table(
            ["Run", "Steps", "Steps / task", "Replies without code", "Steps timed out"],
            [
                [
                    s.label,
                    str(s.steps),
                    f"{s.steps / s.n_with_steps:.1f}",
                    str(s.format_errors),
                    str(s.step_timeouts),
                ]
                for s in agents
            ],
            ["l", "r", "r", "r", "r"],
        )
        out.append("")
    if model.environments:
        out += ["Sandbox environment of each run:", ""]
        out += _table(
            ["Run", "Backend", "Python", "Lock", *KEY_PACKAGES],
            [
                [e.label, e.backend, e.python, e.lock_short, *(e.packages.get(k, "–") for k in KEY_PACKAGES)]
                for e in model.environments
            ],
        )
        out.append("")
    for s in model.summaries:
        if s.differences:
            out += [f"Deliberate differences of {s.label} from the original set-up:", ""]
            out += [f"- {_esc(d)}" for d in s.differences]
            out.append("")
    judged = [s for s in model.summaries if s.judge_cost_usd is not None]
    if judged:
        out += [
            "Judge cost (the design judge's calls, not in the Cost column): "
            + "; ".join(
                f"{_esc(s.label)}: {fmt.money(s.judge_cost_usd, s.n_judge_cost_unknown, what='judged task')} ({fmt.tokens(s.judge_tokens)} tokens)"
                for s in judged
            ),
            "",
        ]

    for t in model.tables:
        out += score_table_md(t)

    if model.plots or model.skipped_plots:
        out += ["## Plots", ""]
        for p in model.plots:
            out.append(f"![{_esc(p.title)}]({plot_dir}/{p.name}.svg)")
            if p.note:
                out.append(f"_{_esc(p.note)}_")
            out.append("")
        out += [f"_{_esc(n)}_" for n in model.skipped_plots] + ([""] if model.skipped_plots else [])

    unsupported = [(run, t) for run in model.runs for t in run.unsupported]
    if unsupported:
        how = (
            "They are left out of every score of this report (--exclude-unsupported)."
            if model.exclude_unsupported
            else "They are run and scored as the paper does (in every mean above); `kramabench report "
            "--exclude-unsupported` leaves them out."
        )
        out += [
            "## Tasks the benchmark cannot support",
            "",
            "Data sources missing from the lake (or documented absent upstream, or outside it), a review that "
            "classes the task unreproducible, or an official solution that needs a module the sandbox lacks: a "
            f"zero there is the benchmark's, not the system's. {how}",
            "",
        ]
        out += _table(
            ["Run", "Domain", "Task", "Why", "Score %", "Details"],
            [
                [
                    run.label,
                    t.domain,
                    t.task_id,
                    ", ".join(t.codes),
                    ("unscored" if t.score is None else fmt.pct(t.score))
                    + (f" ({t.error})" if t.error else ""),
                    fmt.value(t.why, 200),
                ]
                for run, t in unsupported
            ],
            ["l", "l", "l", "l", "r", "l"],
        )
        out.append("")

    out += ["## Errors", ""]
    if model.errors:
        labels = [s.label for s in model.summaries]
        out += _table(
            ["Error kind", *labels],
            [[k, *map(str, v)] for k, v in model.errors.items()],
            ["l", *["r"] * len(labels)],
        )
    else:
        out.append("No errors.")
    out.append("")

    out += [
        "## Unscored items",
        "",
        "Not counted in any mean (a judge could not decide, or no score was recorded).",
        "",
    ]
    if model.unscored:
        out += _table(
            ["Run", "Setting", "Task", "Subtask", "Reason"],
            [
                [run.label, r.setting, r.task_id, r.subtask_id or "–", fmt.value(unscored_reason(r), 120)]
                for run, r in model.unscored
            ],
        )
    else:
        out.append("None.")
    out.append("")

    if model.matrix:
        out += [
            "## Task by task",
            "",
            f"Score % of each task in each run ({_esc(model.matrix_setting)}); "
            "E = error (counted 0), U = unscored, – = not run.",
            "",
        ]
        labels = [s.label for s in model.summaries]
        rows = [
            [r.task_id, *(_matrix_md(c) for c in r.cells), fmt.pct(r.spread) if r.spread else ""]
            for r in model.matrix
        ]
        out += _table(["Task", *labels, "Spread"], rows, ["l", *["r"] * len(labels), "r"])
        out.append("")

    for run in model.runs:
        out += [f"## Tasks: {_esc(run.label)}", ""]
        records = task_rows(run)
        multi = len({r.setting for r in records}) > 1
        subs = any(r.subtask_scores for r in records)
        others = other_records(run)
        main = "Verified" if model.main_gold == "verified" else "Official"
        second = "Official" if main == "Verified" else "Verified"
        classes = any(r.gold_class for r in records)
        cols = [
            ("Task", "l"),
            ("Setting", "l"),
            ("Class", "l"),
            ("Answer type", "l"),
            ("Expected", "l"),
            ("Answer", "l"),
            (f"{main} %", "r"),
            (f"{second} %", "r"),
            ("Subtasks %", "r"),
            ("Note", "l"),
            ("Error", "l"),
            ("Steps", "r"),
            ("Tokens", "r"),
            ("Cost", "r"),
            ("Wall", "r"),
        ]
        stepped = any(r.steps for r in records)
        keep = [
            c
            for c, _ in cols
            if (c != "Setting" or multi)
            and (c != "Subtasks %" or subs)
            and (c != "Steps" or stepped)
            and (c != "Class" or classes)
            and (c != f"{second} %" or others)
        ]
        rows = []
        for r in records:
            score = "unscored" if is_unscored(r) else fmt.pct(record_value(r))
            o = others.get((r.domain, *r.key))
            other = "–" if o is None else "unscored" if is_unscored(o) else fmt.pct(record_value(o))
            if o is not None and o.expected != r.expected:
                other += f" (gold {fmt.value(o.expected, 30)})"
            vals = [x for x in r.subtask_scores.values() if x is not None]
            if not r.subtask_scores:
                sub = "–"
            elif vals:
                sub = f"{fmt.pct(sum(vals) / len(vals))} ({len(vals)}/{len(r.subtask_scores)} scored)"
            else:
                sub = "unscored"
            cells = {
                "Task": r.task_id + (f" / {r.subtask_id}" if r.subtask_id else ""),
                "Setting": r.setting,
                "Answer type": r.answer_type or "–",
                "Expected": fmt.value(r.expected, 60),
                "Answer": fmt.value(r.answer, 60),
                f"{main} %": score,
                f"{second} %": other,
                "Class": r.gold_class or "–",
                "Note": "; ".join(record_notes(r)) or "",
                "Subtasks %": sub,
                "Error": error_kind(r) or "–",
                "Steps": str(len(r.steps)) if r.steps else "–",
                "Tokens": fmt.tokens(r.usage.prompt_tokens + r.usage.completion_tokens),
                "Cost": fmt.record_money(r.usage),
                "Wall": fmt.duration(record_wall(r)),
            }
            rows.append([cells[c] for c in keep])
        align = dict(cols)
        out += _table(keep, rows, [align[c] for c in keep])
        out.append("")
    return "\n".join(out).rstrip() + "\n"


__all__ = ["render_markdown", "score_table_md"]
