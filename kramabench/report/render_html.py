"""The static HTML report: one self-contained file (inline CSS, plots as SVG data URIs, no scripts, no URLs).

Everything taken from a run (answers, code, transcripts, labels) is HTML-escaped: it is untrusted.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from kramabench.contracts.records import Record
from kramabench.contracts.text import html_text
from kramabench.report import fmt
from kramabench.report.artifacts import view as artifact_view
from kramabench.report.compare import MatrixCell
from kramabench.report.environment import KEY_PACKAGES
from kramabench.report.golds import CAPTION as GOLD_CAPTION
from kramabench.report.golds import gold_lines, other_records, record_notes
from kramabench.report.plots import run_color
from kramabench.report.summary import error_kind, record_wall, task_rows, unscored_reason
from kramabench.report.tables import Table, is_unscored, natural_key, record_value
from kramabench.scorers.stats import MeanCI

if TYPE_CHECKING:
    from kramabench.report.load import RunData
    from kramabench.report.model import ReportModel

MAX_TEXT = 60_000  # characters of one code block / transcript message shown

CSS = """
:root{--ink:#1f2933;--muted:#6b7688;--line:#e4e7eb;--bg:#f6f7f9;--card:#fff;--accent:#0b5cad;--bar:52px}
*{box-sizing:border-box}
html{scroll-padding-top:calc(var(--bar) + 12px)}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif;font-variant-numeric:tabular-nums}
header.bar{position:sticky;top:0;z-index:20;height:var(--bar);display:flex;align-items:center;gap:24px;
padding:0 28px;background:#10243e;color:#fff;box-shadow:0 1px 3px rgba(0,0,0,.25)}
header.bar .brand{font-weight:700;letter-spacing:.02em;font-size:16px;white-space:nowrap}
header.bar .brand span{color:#8fc1ff;font-weight:500}
header.bar nav{display:flex;gap:4px;flex-wrap:nowrap;overflow:hidden}
header.bar nav a{color:#d6e4f5;text-decoration:none;padding:6px 10px;border-radius:6px;font-size:13px;white-space:nowrap}
header.bar nav a:hover{background:rgba(255,255,255,.12);color:#fff}
header.bar .when{margin-left:auto;color:#9fb3cc;font-size:12px;white-space:nowrap}
main{max-width:1280px;margin:0 auto;padding:24px 28px 64px}
section{margin:0 0 36px}
h2{font-size:19px;margin:0 0 4px;font-weight:650}
h3{font-size:15px;margin:18px 0 8px}
p.caption,.note{color:var(--muted);font-size:12.5px;margin:6px 2px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(270px,1fr));gap:14px;margin:0 0 32px}
.card{background:var(--card);border-radius:10px;padding:14px 16px;box-shadow:0 1px 2px rgba(16,36,62,.08);
border-top:4px solid var(--c)}
.card .label{font-weight:650;font-size:15px}
.card .id{color:var(--muted);font-size:12px;overflow-wrap:anywhere}
.card .big{font-size:30px;font-weight:700;margin:6px 0 0;line-height:1.1}
.card .big small{font-size:13px;font-weight:500;color:var(--muted)}
.card .facts{display:flex;flex-wrap:wrap;gap:4px 14px;margin-top:8px;font-size:12.5px;color:var(--muted)}
.card .facts b{color:var(--ink);font-weight:600}
.badge{display:inline-block;padding:1px 7px;border-radius:999px;font-size:11.5px;font-weight:600;
background:#eef1f5;color:#44506a;white-space:nowrap}
.badge.err{background:#fde8e8;color:#9b1c1c}.badge.warn{background:#fdf3d7;color:#8a5a00}
.badge.ok{background:#def7ec;color:#046c4e}.badge.uns{background:#ece9fb;color:#5b3fb0}
.chip{display:inline-block;width:10px;height:10px;border-radius:3px;background:var(--c);margin-right:7px;
vertical-align:baseline}
.panel{background:var(--card);border-radius:10px;box-shadow:0 1px 2px rgba(16,36,62,.08);padding:4px 0}
table{border-collapse:separate;border-spacing:0;width:100%}
th,td{padding:8px 12px;text-align:left;vertical-align:top;border-bottom:1px solid var(--line)}
thead th{position:sticky;top:var(--bar);z-index:5;background:#fbfcfd;font-size:12px;font-weight:650;
color:#44506a;text-transform:uppercase;letter-spacing:.03em;border-bottom:2px solid var(--line)}
tbody tr:last-child>td{border-bottom:none}
td.num,th.num{text-align:right}
table.scores td.score{text-align:center;min-width:118px;padding:6px 8px}
table.scores th.num{text-align:center}
.score .v{font-size:17px;font-weight:650;display:block;line-height:1.25}
.score .ci{font-size:11.5px;color:#3e4a5e;display:block}
.score .n{font-size:11px;color:var(--muted);display:block}
.score.best .v{font-weight:800;text-decoration:underline;text-decoration-thickness:2px;text-underline-offset:3px}
.score.total{box-shadow:inset 2px 0 0 #c6ccd6}
.score.empty{color:var(--muted);background:repeating-linear-gradient(45deg,#f4f5f7,#f4f5f7 6px,#eceef2 6px,#eceef2 12px)}
td.row-key{font-weight:500;color:#2f3b4f;min-width:90px;max-width:220px;overflow-wrap:anywhere}
td.row-label{font-weight:600;min-width:150px;max-width:250px;overflow-wrap:anywhere}
.score .u{display:block;font-size:11px;color:#5b3fb0;white-space:nowrap}
td.row-label .sub{display:block;font-weight:400;color:var(--muted);font-size:11.5px}
.plots{display:grid;grid-template-columns:1fr;gap:16px}
.plot{background:var(--card);border-radius:10px;box-shadow:0 1px 2px rgba(16,36,62,.08);padding:14px;text-align:center}
.plot img{max-width:100%;height:auto}
table.tasks{table-layout:fixed}
table.tasks td{font-size:13px}
table.tasks td.val{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;
overflow-wrap:anywhere}
table.tasks tr.task>td{border-bottom:none;padding-bottom:2px}
table.tasks tr.detail>td{padding-top:0;padding-bottom:8px}
table.tasks tr.group>td{background:#f1f4f8;font-weight:650;font-size:12px;text-transform:uppercase;
letter-spacing:.04em;color:#44506a;padding:6px 12px}
td.sc{text-align:center;font-weight:650;border-radius:6px}
table.matrix{table-layout:auto}
table.matrix td{padding:5px 10px}
table.matrix td.mx{border-radius:0;border-bottom:1px solid #fff;font-weight:600;min-width:90px}
.muted{color:var(--muted)}
.dot{display:inline-block;width:7px;height:7px;border-radius:50%;background:#c81e1e;margin-left:6px;vertical-align:middle}
details>summary{cursor:pointer;color:var(--accent);font-size:12px;list-style:none;user-select:none}
details>summary::-webkit-details-marker{display:none}
details>summary::before{content:"▸ ";color:var(--muted)}
details[open]>summary::before{content:"▾ "}
.detail-body{margin:8px 0 4px;padding:12px 14px;background:#fafbfc;border:1px solid var(--line);border-radius:8px}
.detail-body h4{margin:12px 0 6px;font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#44506a}
.detail-body h4:first-child{margin-top:0}
.entry{border-left:3px solid #d5dbe4;padding-left:10px;margin:0 0 12px}
details.inner{margin:0 0 8px}details.inner>summary{font-size:11.5px}
details.inner[open]{padding:6px 0}
.detail-body h4 .meta{text-transform:none;letter-spacing:0;font-weight:400;color:var(--muted);margin-left:6px}
.panel.scroll{overflow-x:auto}
.panel.scroll thead th{position:static}
table.compact th,table.compact td{padding:8px 9px;font-size:13px}
table.compact thead th{font-size:11.5px}
td .sub2{display:block;color:var(--muted);font-size:11px}
pre{margin:0;padding:10px 12px;background:#0f1b2d;color:#e3eaf3;border-radius:6px;overflow:auto;max-height:460px;
font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre}
pre.wrap{white-space:pre-wrap;overflow-wrap:anywhere;background:#f2f4f7;color:var(--ink)}
.msg{margin:0 0 10px}.msg .role{font-size:11px;font-weight:700;text-transform:uppercase;color:var(--muted);margin-bottom:3px}
.callout{background:#fff8e6;border:1px solid #f5d48a;border-radius:10px;padding:12px 16px;margin:0 0 24px;font-size:13px}
.callout ul{margin:6px 0 0;padding-left:20px}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:12.5px}
.kv dt{color:var(--muted)}.kv dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.badge.cls-gold-defect{background:#fde8e8;color:#9b1c1c}.badge.cls-reproduces{background:#def7ec;color:#046c4e}
.badge.cls-solution-defect{background:#e1effe;color:#1e429f}.badge.cls-ambiguous{background:#fdf3d7;color:#8a5a00}
.badge.cls-unreproducible{background:#ece9fb;color:#5b3fb0}
details.step{margin:0;border-bottom:1px solid var(--line);padding:3px 0}
details.step>summary{color:var(--ink);font-size:12.5px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.step>summary .n{display:inline-block;min-width:2.2em;color:var(--muted);text-align:right;margin-right:6px}
details.step>summary .meta{color:var(--muted);margin:0 6px}
details.step[open]{padding:6px 0 10px}
.step-body{margin:6px 0 0 2.6em}.step-body .lbl{font-size:11px;font-weight:700;text-transform:uppercase;color:var(--muted);margin:8px 0 3px}
table.golds td{padding:6px 12px}
table.golds tr.gl.system td{font-weight:700;font-size:15px}
table.golds tr.gl.floor td,table.golds tr.gl.numeric td{color:#44506a}
table.golds tr.gl.numeric td:first-child{padding-left:26px}
table.golds tr.gl.info td{font-size:12px;color:var(--muted)}
@media print{header.bar{position:static}thead th{position:static}details{display:none}}
"""


def _e(x: Any) -> str:
    """Data as HTML text, one line: control and bidi characters (a newline too) shown as escapes, then
    HTML-escaped (kramabench.contracts.text.html_text). Blocks of many lines: :func:`_pre`."""
    return html_text(x, multiline=False)


def score_bg(v: float | None) -> str:
    """Cell colour: red (0) -> amber -> green (100), light enough for dark text."""
    if v is None:
        return "transparent"
    v = min(max(v, 0.0), 1.0)
    return f"hsl({round(4 + v * 128)}, 70%, {round(90 - 6 * (1 - abs(2 * v - 1)))}%)"


def _score_cell(c: MeanCI, *, total: bool = False, best: bool = False) -> str:
    cls = "score total" if total else "score"
    if best:
        cls += " best"
    if c.mean is None:
        inner = '<span class="v">–</span>'
        if c.n_unscored:
            inner += f'<span class="n">{c.n_unscored} unscored</span>'
        return f'<td class="{cls} empty">{inner}</td>'
    unscored = f"+{c.n_unscored} unscored" if c.n_unscored else ""
    title = (
        f"mean {fmt.pct(c.mean, 2)}%, 95% CI {fmt.pct(c.lo, 2)}–{fmt.pct(c.hi, 2)}, {c.n} scored {unscored}"
    )
    return (
        f'<td class="{cls}" style="background:{score_bg(c.mean)}" title="{_e(title.strip())}">'
        f'<span class="v">{fmt.pct(c.mean)}</span>'
        f'<span class="ci">[{fmt.pct(c.lo)}, {fmt.pct(c.hi)}]</span>'
        f'<span class="n">n={c.n}</span>{f"<span class=u>{unscored}</span>" if unscored else ""}</td>'
    )


def score_table_html(t: Table) -> str:
    k = len(t.key_headers)
    best = t.best_rows()
    head = "".join(f"<th>{_e(h)}</th>" for h in t.key_headers) + "".join(
        f'<th class="num">{_e(c)}</th>' for c in t.columns
    )
    body = []
    for j, row in enumerate(t.rows):
        color = run_color(row.run_index if row.run_index is not None else j)
        keys = row.key_cells(k)
        sub = f'<span class="sub">{_e(row.sublabel)}</span>' if row.sublabel else ""
        first = f'<td class="row-label"><span class="chip" style="--c:{color}"></span>{_e(keys[0])}{sub}</td>'
        rest = "".join(f'<td class="row-key">{_e(x)}</td>' for x in keys[1:])
        last = len(row.cells) - 1
        cells = "".join(
            _score_cell(c, total=(i == last and t.columns[-1] == "Total"), best=j in best[i])
            for i, c in enumerate(row.cells)
        )
        body.append(f"<tr>{first}{rest}{cells}</tr>")
    caption = t.caption + (" Underlined: the best mean of a column." if any(best) else "")
    caption = f'<p class="caption">{_e(caption)}</p>' if caption else ""
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in t.notes)
    return (
        f'<section id="{_e(t.key)}"><h2>{_e(t.title)}</h2>{caption}{notes}'
        f'<div class="panel" style="margin-top:10px"><table class="scores"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _cards(model: ReportModel) -> str:
    cards = []
    for s in model.summaries:
        status = "" if s.status == "finished" else f' <span class="badge warn">{_e(s.status)}</span>'
        score = (
            f"{fmt.pct(s.score.mean)}<small>% [{fmt.pct(s.score.lo)}, {fmt.pct(s.score.hi)}]</small>"
            if s.score.mean is not None
            else "–"
        )
        facts = [
            f"<b>{s.n_tasks}</b> task{'' if s.n_tasks == 1 else 's'}",
            f"<b>{s.n_errors}</b> error{'' if s.n_errors == 1 else 's'}",
            f"<b>{s.n_unscored}</b> unscored",
            *(
                [
                    f'<a class="unsupported" href="#unsupported"><b>{s.n_unsupported}</b> the benchmark cannot support'
                    f"{' (left out)' if 'left out' in s.unsupported_text else ''}</a>"
                ]
                if s.n_unsupported
                else []
            ),
            f"<b>{_e(fmt.money(s.cost_usd, s.n_unpriced_calls))}</b> cost",
            *(
                [
                    f"<b>{_e(fmt.money(s.judge_cost_usd, s.n_judge_cost_unknown, what='judged task'))}</b> judge cost",
                    f"<b>{_e(fmt.tokens(s.judge_tokens))}</b> judge tokens",
                ]
                if s.judge_cost_usd is not None
                else []
            ),
            f"<b>{_e(fmt.tokens(s.tokens))}</b> tokens",
            f"<b>{_e(fmt.duration(s.wall_s))}</b> wall",
        ]
        gold_line = ""
        rg = model.golds[s.index] if s.index < len(model.golds) else None
        if rg is not None:
            main, other = model.main_gold, ("official" if model.main_gold == "verified" else "verified")
            oc = rg.columns[other]
            parts = [
                f"{'official (paper-comparable)' if other == 'official' else 'verified'} "
                f"<b>{_e(fmt.pct(oc.score.mean))}%</b>"
            ]
            fl = rg.columns[main].floors
            if rg.floors_apply and fl.n:
                parts.append(f"floor (constant 0) <b>{_e(fmt.pct(fl.floors.get('zero')))}%</b>")
            gold_line = (
                f'<div class="facts"><span>{_e(main)} gold</span>'
                + "".join(f"<span>{p}</span>" for p in parts)
                + "</div>"
            )
        cards.append(
            f'<div class="card" style="--c:{run_color(s.index)}"><div class="label">{_e(s.label)}{status}</div>'
            f'<div class="id">{_e(s.run_id)} · {_e(s.workload)} · {_e(s.main_setting)}</div>'
            f'<div class="big">{score}</div>{gold_line}'
            f'<div class="facts">{"".join(f"<span>{f}</span>" for f in facts)}</div></div>'
        )
    return f'<div class="cards">{"".join(cards)}</div>'


def _golds(model: ReportModel) -> str:
    """The headline section: each run against the official and the verified gold, beside the floors."""
    if not model.golds:
        return ""
    body = []
    for rg in model.golds:
        lines = gold_lines(rg)
        color = run_color(rg.index)
        body.append(
            f'<tr class="group"><td colspan="3"><span class="chip" style="--c:{color}"></span>{_e(rg.label)} '
            f'<span class="muted">· {_e(rg.run_id)} · {_e(rg.setting)}</span></td></tr>'
        )
        for line in lines:
            cls = f"gl {line.kind}"
            if line.kind == "info":
                body.append(
                    f'<tr class="{cls}"><td>{_e(line.label)}</td><td colspan="2">{_e(line.verified)}</td></tr>'
                )
                continue
            cells = []
            for text, v in ((line.official, line.values[0]), (line.verified, line.values[1])):
                bg = score_bg(v) if line.kind in ("system", "bounded") and v is not None else "transparent"
                cells.append(f'<td class="num" style="background:{bg}">{_e(text)}</td>')
            body.append(f'<tr class="{cls}"><td>{_e(line.label)}</td>{"".join(cells)}</tr>')
    notes = "".join(f'<p class="note">{_e(n)}</p>' for rg in model.golds for n in rg.notes)
    return (
        '<section id="golds"><h2>Scores: official and verified gold, with floors</h2>'
        f'<p class="caption">{_e(GOLD_CAPTION)}</p>{notes}'
        '<div class="panel" style="margin-top:10px"><table class="golds"><thead><tr><th style="width:46%"></th>'
        '<th class="num">Official gold (paper-comparable) %</th><th class="num">Verified gold %</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _runs_table(model: ReportModel) -> str:
    rows = []
    agents = any(s.n_with_steps for s in model.summaries)
    for s in model.summaries:
        badge = "ok" if s.status == "finished" else "warn"
        rows.append(
            f'<tr><td class="row-label"><span class="chip" style="--c:{run_color(s.index)}"></span>{_e(s.label)}'
            f'<span class="sub">{_e(s.run_id)}</span></td>'
            f'<td>{_e(s.workload)}</td><td style="white-space:nowrap">{_e(", ".join(s.settings) or "–")}</td>'
            f'<td class="num">{s.n_tasks}</td><td class="num">{s.n_unscored}</td><td class="num">{s.n_errors}</td>'
            f'<td class="num">{_e(fmt.tokens(s.prompt_tokens))}</td><td class="num">{_e(fmt.tokens(s.completion_tokens))}</td>'
            f'<td class="num">{s.model_calls}</td>'
            f'<td class="num">{_cost_html(s)}</td>'
            f'<td class="num">{_e(fmt.money(s.cost_per_task) if s.cost_per_task is not None else _per_task_na(s))}</td>'
            f'<td class="num">{_e(fmt.duration(s.wall_s))}</td>'
            f'<td class="num">{_e(fmt.duration(s.elapsed_s))}</td>'
            + (
                f'<td class="num">{s.steps}</td><td class="num">{s.format_errors}</td>'
                f'<td class="num">{s.step_timeouts}</td>'
                if agents
                else ""
            )
            + f'<td><span class="badge {badge}">{_e(s.status)}</span></td></tr>'
        )
    cols = [
        ("Run", ""),
        ("Workload", ""),
        ("Settings", ""),
        ("Tasks", "num"),
        ("Unscored", "num"),
        ("Errors", "num"),
        ("Tokens in", "num"),
        ("Tokens out", "num"),
        ("Calls", "num"),
        ("Cost", "num"),
        ("Cost / task", "num"),
        ("Task time", "num"),
        ("Elapsed", "num"),
    ]
    if agents:
        cols += [("Steps", "num"), ("No code", "num"), ("Timed out", "num")]
    head = "".join(f'<th class="{c}">{h}</th>' for h, c in [*cols, ("Status", "")])
    return (
        '<section id="runs"><h2>Runs</h2><p class="caption">Tokens, cost and task time are summed over '
        "every record of a run (retries included); elapsed is the run's clock time (tasks run concurrently); "
        "counts are of final outcomes"
        + (
            "; an agent's steps, its replies without code and its steps stopped at their time limit"
            if agents
            else ""
        )
        + ".</p>"
        f'<div class="panel scroll" style="margin-top:10px"><table class="compact"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{_environments(model)}{_differences(model)}</section>"
    )


def _differences(model: ReportModel) -> str:
    """The deliberate differences of each run's set-up from the original (declared by its setting)."""
    parts = []
    for s in model.summaries:
        if s.differences:
            items = "".join(f"<li>{_e(d)}</li>" for d in s.differences)
            parts.append(
                f'<p class="caption" style="margin-top:14px">Deliberate differences of {_e(s.label)} from '
                f"the original set-up:</p><ul>{items}</ul>"
            )
    return "".join(parts)


def _environments(model: ReportModel) -> str:
    """The sandbox environment of each run: backend, Python, lock hash, key package versions."""
    if not model.environments:
        return ""
    cols = ["Run", "Backend", "Python", "Lock", *KEY_PACKAGES]
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(v)}</td>"
            for v in [
                e.label,
                e.backend,
                e.python,
                e.lock_short,
                *(e.packages.get(k, "–") for k in KEY_PACKAGES),
            ]
        )
        + "</tr>"
        for e in model.environments
    )
    note = f'<p class="note">{_e(model.environment_warning)}</p>' if model.environment_warning else ""
    return (
        '<p class="caption" style="margin-top:14px">Sandbox environment of each run (the lock hash names '
        f'every installed package).</p>{note}<div class="panel scroll" style="margin-top:6px">'
        f'<table class="compact"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    )


def _cost_html(s: Any) -> str:
    if s.n_unpriced_calls:
        n = s.n_unpriced_calls
        priced = f"; {fmt.money(s.cost_usd)} priced" if s.cost_usd else ""
        return f'unknown<span class="sub2">{n} unpriced call{"s" if n != 1 else ""}{_e(priced)}</span>'
    return _e(fmt.money(s.cost_usd))


def _per_task_na(s: Any) -> str:
    return "unknown" if s.n_unpriced_calls else "n/a"


def _plots(model: ReportModel) -> str:
    if not model.plots and not model.skipped_plots:
        return ""
    items = []
    for n in model.skipped_plots:
        items.append(f'<p class="note">{_e(n)}</p>')
    for p in model.plots:
        data = base64.b64encode(p.svg.encode("utf-8")).decode("ascii")
        note = f'<p class="note">{_e(p.note)}</p>' if p.note else ""
        items.append(
            f'<figure class="plot" style="margin:0"><img alt="{_e(p.title)}" '
            f'src="data:image/svg+xml;base64,{data}">{note}</figure>'
        )
    return f'<section id="plots"><h2>Plots</h2><div class="plots" style="margin-top:10px">{"".join(items)}</div></section>'


def _unsupported(model: ReportModel) -> str:
    """Every run's tasks the benchmark cannot support (a data source missing from the lake, ...), with why and
    what the run scored: a zero there is the benchmark's doing, not the system's."""
    rows = []
    for i, run in enumerate(model.runs):
        for t in run.unsupported[:MAX_TABLE_ROWS]:
            score = "unscored" if t.score is None else fmt.pct(t.score)
            rows.append(
                f'<tr class="unsupported" data-task="{_e(t.task_id)}"><td><span class="chip" '
                f'style="--c:{run_color(i)}"></span>{_e(run.label)}</td><td>{_e(t.domain)}</td>'
                f"<td><b>{_e(t.task_id)}</b></td><td>{_e(', '.join(t.codes))}</td>"
                f'<td class="num">{_e(score)}{" (" + _e(t.error) + ")" if t.error else ""}</td><td>{_e(t.why)}</td></tr>'
            )
        if len(run.unsupported) > MAX_TABLE_ROWS:
            rows.append(_more_rows(len(run.unsupported) - MAX_TABLE_ROWS, 6, "tasks"))
    if not rows:
        return ""
    how = (
        "They are left out of every score of this report (--exclude-unsupported)."
        if model.exclude_unsupported
        else "They are run and scored as the paper does (in every mean above); `kramabench report "
        "--exclude-unsupported` leaves them out."
    )
    return (
        '<section id="unsupported"><h2>Tasks the benchmark cannot support</h2><p class="caption">Tasks whose data '
        "sources are missing from the lake (or documented absent upstream, or outside it), that the errata review "
        "classes unreproducible, or whose official solution needs a module the sandbox lacks: a zero there is the "
        f"benchmark's, not the system's. {_e(how)}</p>"
        '<div class="panel" style="margin-top:10px"><table><thead><tr><th>Run</th><th>Domain</th><th>Task</th>'
        '<th>Why</th><th class="num">Score %</th><th>Details</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _errors(model: ReportModel) -> str:
    labels = [s for s in model.summaries]
    if model.errors:
        head = "".join(
            f'<th class="num"><span class="chip" style="--c:{run_color(s.index)}"></span>{_e(s.label)}</th>'
            for s in labels
        )
        rows = "".join(
            f'<tr><td><span class="badge err">{_e(k)}</span></td>'
            + "".join(f'<td class="num">{n or "·"}</td>' for n in v)
            + "</tr>"
            for k, v in model.errors.items()
        )
        table = (
            f'<div class="panel" style="margin-top:10px"><table><thead><tr><th>Error kind</th>{head}</tr>'
            f"</thead><tbody>{rows}</tbody></table></div>"
        )
    else:
        table = '<p class="note">No errors.</p>'
    if model.unscored:
        urows = "".join(
            f'<tr><td><span class="chip" style="--c:{run_color(_index(model, run))}"></span>{_e(run.label)}</td>'
            f"<td>{_e(r.setting)}</td><td>{_e(r.task_id)}</td><td>{_e(r.subtask_id or '–')}</td>"
            f"<td>{_e(fmt.value(unscored_reason(r), 200))}</td></tr>"
            for run, r in model.unscored[:MAX_TABLE_ROWS]
        ) + (
            _more_rows(len(model.unscored) - MAX_TABLE_ROWS, 5, "unscored items")
            if len(model.unscored) > MAX_TABLE_ROWS
            else ""
        )
        utable = (
            '<h3 id="unscored">Unscored items <span class="badge uns">not counted</span></h3>'
            '<p class="caption">A judge could not decide, or no score was recorded: these are left out of every '
            "mean, not counted as 0.</p>"
            '<div class="panel" style="margin-top:10px"><table><thead><tr><th>Run</th><th>Setting</th><th>Task</th>'
            f"<th>Subtask</th><th>Reason</th></tr></thead><tbody>{urows}</tbody></table></div>"
        )
    else:
        utable = '<h3 id="unscored">Unscored items</h3><p class="note">None.</p>'
    return f'<section id="errors"><h2>Errors</h2><p class="caption">Error kinds of the final outcomes.</p>{table}{utable}</section>'


def _index(model: ReportModel, run: RunData) -> int:
    for i, r in enumerate(model.runs):
        if r is run:
            return i
    return 0


def _wbr(text: str) -> str:
    """Escaped text that may break after underscores (long answer types in narrow columns)."""
    return _e(text).replace("_", "_<wbr>")


def _pre(text: str, cls: str = "") -> str:
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters)"
    return f'<pre class="{cls}">{html_text(text, multiline=True)}</pre>'


def _message_html(role: str, content: Any) -> str:
    return f'<div class="msg"><div class="role">{_e(role)}</div>{_pre(fmt.pretty(content), "wrap")}</div>'


_RESPONSE_KEYS = ("response", "completion", "reply", "text", "output")
_TITLE_KEYS = ("type", "kind")


def _is_short(v: Any) -> bool:
    return (
        v is None
        or isinstance(v, (bool, int, float))
        or (isinstance(v, str) and len(v) <= 80 and "\n" not in v)
    )


def _messages_html(messages: list[Any]) -> str:
    items = [m for m in messages if isinstance(m, dict)]
    if not items:
        return ""
    body = "".join(_message_html(str(m.get("role", "?")), m.get("content", "")) for m in items)
    roles = ", ".join(dict.fromkeys(str(m.get("role", "?")) for m in items))
    return (
        f'<details class="inner"><summary>prompt · {len(items)} message{"s" if len(items) != 1 else ""} '
        f"({_e(roles)})</summary>{body}</details>"
    )


#: characters of one step's observation or code shown in the report (its first and last part; records.jsonl
#: and ``kramabench view`` have the whole)
MAX_STEP_TEXT = 4000
_STEP_BADGE = {"ok": "ok", "final_answer": "ok", "format_error": "warn", "answer_error": "warn"}


def _clip(text: str, n: int = MAX_STEP_TEXT) -> str:
    if len(text) <= n:
        return text
    return f"{text[: n // 2]}\n[… {len(text) - n:,} characters cut here; the record has them all …]\n{text[-n // 2 :]}"


def steps_html(steps: list[Any]) -> str:
    """An agent's steps, one line each (number, outcome, tokens, time, the thought's first line), each opened
    on its own: readable at 50 steps and more."""
    items = []
    for s in steps:
        first = next((ln.strip() for ln in (s.thought or s.error or "").splitlines() if ln.strip()), "")
        meta = [f"{fmt.tokens(s.prompt_tokens + s.completion_tokens)} tokens", fmt.duration(s.wall_s)]
        if s.code_s is not None:
            meta.append(f"code {fmt.duration(s.code_s)}")
        if s.state_lost:
            meta.append("state lost")
        body = []
        note = (s.details or {}).get("replay_note")
        if note:
            meta.append("replay note")
        for label, text, cls in (
            ("thought", s.thought, "wrap"),
            ("code", s.code, ""),
            ("observation", s.observation, "wrap"),
            ("error", s.error, "wrap"),
            ("replay note", note if isinstance(note, str) else None, "wrap"),
        ):
            if text:
                body.append(f'<div class="lbl">{label}</div>{_pre(_clip(text), cls)}')
        items.append(
            f'<details class="step"><summary><span class="n">{s.step}</span>'
            f'<span class="badge {_STEP_BADGE.get(s.outcome, "err")}">{_e(s.outcome)}</span>'
            f'<span class="meta">{_e(" · ".join(meta))}</span>{_e(first[:160])}</summary>'
            f'<div class="step-body">{"".join(body)}</div></details>'
        )
    return f'<div class="steps">{"".join(items)}</div>'


def transcript_html(entries: list[dict[str, Any]]) -> str:
    """Render a transcript of any reasonable shape.

    Entries may be chat messages (``role``/``content``), model calls (``messages`` or ``request.messages``
    plus a ``response``), or other steps (``type``/``kind``: plan, execution, ...). Short fields go on the
    entry's heading line, long ones (code, output tails, plans) in labelled blocks; the prompt of a model
    call is folded so the response shows first.
    """
    parts = []
    for i, e in enumerate(entries, start=1):
        if not isinstance(e, dict):
            parts.append(_pre(fmt.pretty(e), "wrap"))
            continue
        if "role" in e and "content" in e and len(e) <= 3:
            parts.append(_message_html(str(e["role"]), e["content"]))
            continue
        req = e.get("request")
        request = req if isinstance(req, dict) else {}
        messages = e.get("messages") if isinstance(e.get("messages"), list) else request.get("messages") or []
        response = next((e[k] for k in _RESPONSE_KEYS if k in e), None)
        if isinstance(response, dict):
            response = response.get("text") or response.get("content") or response
        default = "model call" if (messages or response is not None) else f"entry {i}"
        title = next((str(e[k]) for k in _TITLE_KEYS if isinstance(e.get(k), str)), default)
        skip = {"messages", "request", *_RESPONSE_KEYS, *_TITLE_KEYS}
        rest = {k: v for k, v in e.items() if k not in skip}
        facts = " · ".join(
            f"{k} {fmt.value(v, 60)}" for k, v in rest.items() if _is_short(v) and v not in (None, "")
        )
        block = [
            f"<h4>{_e(title.replace('_', ' '))}{f' <span class=meta>{_e(facts)}</span>' if facts else ''}</h4>"
        ]
        if isinstance(messages, list):
            block.append(_messages_html(messages))
        if response is not None:
            block.append(_message_html("response", response))
        for k, v in rest.items():
            if not _is_short(v) and v not in ([], {}):
                block.append(_message_html(k.replace("_", " "), v))
        parts.append(f'<div class="entry">{"".join(block)}</div>')
    return "".join(parts)


def _artifacts(r: Record, run_dir: Any) -> str:
    """The task's collected files: a list, the first rows of each table, each image inline."""
    items = []
    for a in r.artifacts:
        v = artifact_view(a, run_dir)
        where = (
            '<span class="note">not in the run folder</span>'
            if v.file is None
            else (
                f'<a href="{_e(v.file.as_uri())}">{_e(a.path)}</a>'
                if v.exists
                else f'{_e(a.path)} <span class="note">(missing)</span>'
            )
        )
        head = (
            f"<div><b>{_e(a.name)}</b> · {_e(a.media_type)} · {_e(f'{a.bytes:,}')} bytes · "
            f'<span class="note">sha256 {_e(a.sha256[:12])}</span> · {where}</div>'
        )
        body = ""
        if v.table:
            header, rows = v.table[0], v.table[1 : 1 + 10]
            th = "".join(f"<th>{_e(c)}</th>" for c in header)
            trs = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
            body = (
                f'<table class="tasks preview"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>'
                f'<p class="note">first rows{(" · " + _e(v.table_note)) if v.table_note else ""}</p>'
            )
        elif v.image_uri:
            body = f'<img class="artifact" alt="{_e(a.name)}" src="{v.image_uri}" style="max-width:100%;max-height:480px">'
        elif v.table_note:
            body = f'<p class="note">{_e(v.table_note)}</p>'
        items.append(f'<div class="artifact">{head}{body}</div>')
    n = len(r.artifacts)
    return f"<h4>Artifacts · {n} {'file' if n == 1 else 'files'}</h4>{''.join(items)}"


def _detail(r: Record, run_dir: Any = None, other: Record | None = None) -> str:
    blocks = []
    if r.error is not None:
        blocks.append(f"<h4>Error · {_e(r.error.kind)}</h4>{_pre(r.error.message, 'wrap')}")
    kv = [
        ("metric", r.metric or "–"),
        ("expected", fmt.value(r.expected, None)),
        ("answer", fmt.value(r.answer, None)),
    ]
    if r.gold:
        kv.insert(1, ("gold", r.gold + (f" (reviewed class: {r.gold_class})" if r.gold_class else "")))
    if other is not None and (other.expected != r.expected or other.score != r.score):
        kv.append((f"expected ({other.gold} gold)", fmt.value(other.expected, None)))
        kv.append(
            (f"score ({other.gold} gold)", "unscored" if is_unscored(other) else fmt.pct(record_value(other)))
        )
    if r.unscored or is_unscored(r):
        kv.append(("unscored", unscored_reason(r)))
    if r.files_read:
        kv.append(("files read", ", ".join(r.files_read)))
    kv.append(("model calls", str(r.usage.model_calls)))
    if r.iterations:
        kv.append(("iterations", str(r.iterations)))
    if r.attempt:
        kv.append(("attempt", str(r.attempt)))
    blocks.append(
        '<h4>Outcome</h4><dl class="kv">'
        + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in kv)
        + "</dl>"
    )
    if r.score_details:
        blocks.append(f"<h4>Score details</h4>{_pre(fmt.pretty(r.score_details), 'wrap')}")
    if r.subtask_scores or r.subtask_answers:
        keys = sorted(set(r.subtask_scores) | set(r.subtask_answers), key=natural_key)
        rows = "".join(
            f'<tr><td>{_e(k)}</td><td class="val">{_e(fmt.value(r.subtask_answers.get(k), 200))}</td>'
            f"{_sc_cell(r.subtask_scores.get(k), k not in r.subtask_scores)}</tr>"
            for k in keys
        )
        blocks.append(
            '<h4>Subtasks (reported apart)</h4><table class="tasks"><thead><tr><th>Subtask</th><th>Answer</th>'
            f'<th class="num" style="width:90px">Score %</th></tr></thead><tbody>{rows}</tbody></table>'
        )
    if r.artifacts and run_dir is not None:
        blocks.append(_artifacts(r, run_dir))
    if r.steps:
        n = len(r.steps)
        blocks.append(f"<h4>Steps · {n}</h4>{steps_html(r.steps)}")
    if r.pipeline_code:
        blocks.append(f"<h4>Pipeline code</h4>{_pre(r.pipeline_code)}")
    if r.transcript:
        n = len(r.transcript)
        blocks.append(
            f"<h4>Transcript · {n} {'entry' if n == 1 else 'entries'}</h4>{transcript_html(r.transcript)}"
        )
    bits = [
        b
        for b, on in (
            ("steps", r.steps),
            ("code", r.pipeline_code),
            ("transcript", r.transcript),
            ("artifacts", r.artifacts),
            ("error", r.error),
            ("subtasks", r.subtask_scores),
        )
        if on
    ]
    summary = " · ".join(bits + ["details"])
    return (
        f'<details><summary>{_e(summary)}</summary><div class="detail-body">{"".join(blocks)}</div></details>'
    )


def _sc_cell(v: float | None, missing: bool = False, note: str = "") -> str:
    if missing:
        return '<td class="sc">–</td>'
    extra = f'<span class="badge warn" style="display:block;margin-top:3px">{_e(note)}</span>' if note else ""
    if v is None:
        return f'<td class="sc"><span class="badge uns">unscored</span>{extra}</td>'
    return f'<td class="sc" style="background:{score_bg(v)}">{fmt.pct(v)}{extra}</td>'


#: the HTML stays a page a browser opens: at most this many task rows per run (report.md lists every one) ...
MAX_TASK_ROWS = 5_000
#: ... and at most this many bytes of opened-row details (code, transcript, score details) in all
DETAIL_HTML_BYTES = 24 * 1024 * 1024
#: rows of the other long tables (task by task, unscored items)
MAX_TABLE_ROWS = 5_000


def _more_rows(n: int, cols: int, what: str) -> str:
    return (
        f'<tr class="group"><td colspan="{cols}">{n:,} more {what} not shown: the page is kept to a size a '
        "browser opens; report.md lists every one, records.jsonl holds them whole</td></tr>"
    )


def _tasks(model: ReportModel) -> str:
    sections = []
    detail_left = DETAIL_HTML_BYTES
    details_left_out = 0
    main = "Verified" if model.main_gold == "verified" else "Official"
    second = "Official" if main == "Verified" else "Verified"
    for i, run in enumerate(model.runs):
        stepped = any(r.steps for r in run.outcomes())
        cols = [
            ("Task", "17%"),
            ("Type", "10%" if not stepped else "8%"),
            ("Expected", "14%"),
            ("Answer", "14%"),
            (main, "8%"),
            (second, "8%"),
            ("Error", "9%"),
            *([("Steps", "5%")] if stepped else []),
            ("Tokens", "6%" if not stepped else "5%"),
            ("Cost", "7%" if not stepped else "6%"),
            ("Wall", "7%"),
        ]
        head = "".join(
            f'<th class="{"num" if h in ("Steps", "Tokens", "Cost", "Wall") else ""}" style="width:{w}">{h}</th>'
            for h, w in cols
        )
        others = other_records(run)
        rows = []
        group = None
        multi_setting = len(run.settings()) > 1
        all_rows = task_rows(run)
        for r in all_rows[:MAX_TASK_ROWS]:
            g = (r.setting, r.domain)
            if g != group:
                group = g
                label = f"{r.setting} · {r.domain}" if multi_setting else r.domain
                rows.append(f'<tr class="group"><td colspan="{len(cols)}">{_e(label)}</td></tr>')
            kind = error_kind(r)
            err = (
                f'<span class="badge err" title="{_e(r.error.message if r.error else "")}">{_e(kind)}</span>'
                if kind
                else "–"
            )
            notes = record_notes(r)
            score = _sc_cell(None) if is_unscored(r) else _sc_cell(record_value(r), note=" · ".join(notes))
            o = others.get((r.domain, *r.key))
            if o is None:
                other = '<td class="sc">–</td>'
            else:
                other = (
                    _sc_cell(None)
                    if is_unscored(o)
                    else _sc_cell(record_value(o), note=" · ".join(record_notes(o)))
                )
            task = _e(r.task_id) + (
                f'<br><span class="note">{_e(r.subtask_id)}</span>' if r.subtask_id else ""
            )
            if r.gold_class:
                task += f'<br><span class="badge cls-{_e(r.gold_class)}">{_e(r.gold_class)}</span>'
            if o is not None and o.expected != r.expected:
                task += (
                    f'<br><span class="note" title="{_e(fmt.value(o.expected, 2000))}">{_e(second.lower())} gold: '
                    f"{_e(fmt.value(o.expected, 40))}</span>"
                )

            anchor = f"{run.run_id}:{r.setting}:{r.task_id}:{r.subtask_id or ''}"
            detail = _detail(r, run.path, o) if detail_left > 0 else ""
            detail_left -= len(detail)
            if not detail:
                details_left_out += 1
                detail = (
                    '<p class="note">Details left out: this page holds at most '
                    f"{DETAIL_HTML_BYTES // (1024 * 1024)} MB of them (records.jsonl has them all).</p>"
                )
            rows.append(
                f'<tr class="task" id="{_e(anchor)}">'
                f"<td><b>{task}</b></td><td>{_wbr(r.answer_type or '–')}</td>"
                f'<td class="val" title="{_e(fmt.value(r.expected, 2000))}">{_e(fmt.value(r.expected, 90))}</td>'
                f'<td class="val" title="{_e(fmt.value(r.answer, 2000))}">{_e(fmt.value(r.answer, 90))}</td>'
                f"{score}{other}<td>{err}</td>"
                + (f'<td class="num">{len(r.steps) if r.steps else "–"}</td>' if stepped else "")
                + f'<td class="num">{_e(fmt.tokens(r.usage.prompt_tokens + r.usage.completion_tokens))}</td>'
                f'<td class="num">{_e(fmt.record_money(r.usage))}</td>'
                f'<td class="num">{_e(fmt.duration(record_wall(r)))}</td></tr>'
                f'<tr class="detail"><td colspan="{len(cols)}">{detail}</td></tr>'
            )
        if len(all_rows) > MAX_TASK_ROWS:
            rows.append(_more_rows(len(all_rows) - MAX_TASK_ROWS, len(cols), "task rows of this run"))
        sections.append(
            f'<h3><span class="chip" style="--c:{run_color(i)}"></span>{_e(run.label)} '
            f'<span class="note">{_e(run.run_id)}</span></h3>'
            f'<div class="panel"><table class="tasks"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    left_out = (
        (
            f'<p class="note">The details of {details_left_out:,} row(s) are left out to keep the page small '
            "(records.jsonl has them).</p>"
        )
        if details_left_out
        else ""
    )
    return (
        '<section id="tasks"><h2>Tasks</h2><p class="caption">Final outcome of every task; open a row for the '
        f"steps, the pipeline code, the transcript and the score details.</p>{left_out}{''.join(sections)}</section>"
    )


def _matrix_cell(c: MatrixCell) -> str:
    if not c.present:
        return '<td class="sc mx" title="not run">–</td>'
    if c.unscored:
        return '<td class="sc mx"><span class="badge uns">unscored</span></td>'
    v = c.value
    text = fmt.pct(v, 0) if v is not None else "–"
    err = f'<span class="dot" title="{_e(c.error)}"></span>' if c.error else ""
    title = f"{fmt.pct(v)}%" + (f" · {c.error}" if c.error else "")
    return f'<td class="sc mx" style="background:{score_bg(v)}" title="{_e(title)}">{text}{err}</td>'


def _matrix(model: ReportModel) -> str:
    if not model.matrix:
        return ""
    head = "".join(
        f'<th class="num"><span class="chip" style="--c:{run_color(s.index)}"></span>{_e(s.label)}</th>'
        for s in model.summaries
    )
    rows = []
    group = None
    n = len(model.summaries) + 3
    for r in model.matrix[:MAX_TABLE_ROWS]:
        if r.domain != group:
            group = r.domain
            rows.append(f'<tr class="group"><td colspan="{n}">{_e(r.domain)}</td></tr>')
        spread = f"{fmt.pct(r.spread, 0)}" if r.spread else ""
        rows.append(
            f'<tr><td><b>{_e(r.task_id)}</b></td><td class="muted">{_wbr(r.answer_type or "–")}</td>'
            + "".join(_matrix_cell(c) for c in r.cells)
            + f'<td class="num muted">{spread}</td></tr>'
        )
    if len(model.matrix) > MAX_TABLE_ROWS:
        rows.append(_more_rows(len(model.matrix) - MAX_TABLE_ROWS, n, "tasks"))
    return (
        '<section id="compare"><h2>Task by task</h2><p class="caption">Score % of every task in each run '
        f"({_e(model.matrix_setting)}); a red dot marks an error outcome (counted 0); spread = best minus "
        "worst run.</p>"
        '<div class="panel" style="margin-top:10px"><table class="tasks matrix"><thead><tr><th>Task</th>'
        f'<th>Type</th>{head}<th class="num">Spread</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        "</div></section>"
    )


def render_html(model: ReportModel) -> str:
    nav = [
        ("golds", "Golds"),
        ("scores", "Scores"),
        ("plots", "Plots"),
        ("runs", "Runs"),
        ("errors", "Errors"),
        ("compare", "Compare"),
        ("tasks", "Tasks"),
    ]
    if not model.matrix:
        nav = [n for n in nav if n[0] != "compare"]
    if not model.golds:
        nav = [n for n in nav if n[0] != "golds"]
    if any(run.unsupported for run in model.runs):
        nav.insert(nav.index(("errors", "Errors")), ("unsupported", "Unsupported"))
    if model.tables:
        nav = [(model.tables[0].key, "Scores") if k == "scores" else (k, v) for k, v in nav]
    if not model.plots and not model.skipped_plots:
        nav = [n for n in nav if n[0] != "plots"]
    links = "".join(f'<a href="#{_e(k)}">{_e(v)}</a>' for k, v in nav)
    warnings = ""
    if model.warnings:
        warnings = (
            '<div class="callout"><b>Warnings while reading the runs</b><ul>'
            + "".join(f"<li>{_e(w)}</li>" for w in model.warnings)
            + "</ul></div>"
        )
    tables = "".join(score_table_html(t) for t in model.tables) or (
        '<section id="scores"><h2>Scores</h2><p class="note">No records to score yet.</p></section>'
    )
    title = "KramaBench report · " + ", ".join(s.label for s in model.summaries)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="bar"><div class="brand">KramaBench <span>report</span></div><nav>{links}</nav>'
        f'<div class="when">{model.generated_at:%Y-%m-%d %H:%M} UTC · {len(model.runs)} run(s)</div></header>'
        f"<main>{warnings}{_cards(model)}{_golds(model)}{tables}{_plots(model)}{_runs_table(model)}{_unsupported(model)}{_errors(model)}"
        f"{_matrix(model)}{_tasks(model)}</main></body></html>\n"
    )


__all__ = ["CSS", "render_html", "score_bg", "score_table_html", "transcript_html"]
