"""An agent's trace on the task page, from a real run (``kramabench run --system code-agent`` in a subprocess, the
local sandbox, the local OpenAI-compatible server scripting each task's conversation): each step's thought as
Markdown (markup in it stays text), its code and output highlighted, the model call that made each step found
in calls.jsonl with its whole request and reply; a big record cut, whole one request away; the run's tables by
domain and difficulty are the report's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kramabench.testing import OpenAIServer
from kramabench.view.api import ViewApi
from kramabench.view.cut import cut_record, pointer, value_at
from kramabench.view.render import highlight, markdown, record_render
from tests.baselines.agent_scripts import by_step, lake_dir_of
from tests.run.synth import make_workload
from tests.view.conftest import XSS, manifest, record, write_run

pytestmark = [pytest.mark.slow]

THOUGHT = (
    "I will **read the table** first, then `count` rows:\n\n- step one\n- step two\n\n"
    f"{XSS} [docs](https://example.org/x) [bad](javascript:alert(1)) ![img](http://127.0.0.1:9/x.png)"
)

#: every tag a Markdown tree may hold
TAGS = {
    "p",
    "h3",
    "h4",
    "h5",
    "h6",
    "em",
    "strong",
    "s",
    "code",
    "pre",
    "ul",
    "ol",
    "li",
    "blockquote",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
}


def _script():
    def replies(n: int, req: Any) -> str:
        first_user = next(m["content"] for m in req.messages if m["role"] == "user")
        k = int(re.search(r"for k=(\d+)", first_user).group(1))
        lake = lake_dir_of(req.messages)
        if n == 1:
            return f"Thought: {THOUGHT}\n```python\nimport pandas as pd\ndf = pd.read_csv('{lake}/numbers.csv')\nprint(df.shape)\n```\n"
        if n == 2:
            return f"Thought: pick the row for k={k}\n```python\nv = int(df.loc[df['k'] == {k}, 'v'].iloc[0])\nprint('v is', v)\n```\n"
        return "Thought: done\n```python\nfinal_answer(v)\n```\n"

    return by_step(replies)


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("trace")
    root = make_workload(tmp / "wl", n=3)
    res = tmp / "res"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(PYTHONPATH=str(repo_root), KRAMABENCH_CACHE=str(tmp / "cache"), COLUMNS="200")
    with OpenAIServer() as server:
        server.handler = _script()
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "kramabench",
                "run",
                "--workload",
                str(root),
                "--system",
                "code-agent",
                "--model",
                f"openai-compatible/test-model@{server.base_url}",
                "--results",
                str(res),
                "--run-id",
                "agent",
                "-j",
                "1",
                "--progress",
                "none",
                "--no-report",
            ],
            capture_output=True,
            text=True,
            cwd=repo_root,
            env=env,
            timeout=600,
        )
    assert p.returncode == 0, p.stderr[-3000:]
    yield res


def test_each_step_has_its_model_call_one_request_away(agent_run: Path) -> None:
    api = ViewApi(agent_run)
    api.index.scan()
    f = api.run("agent")
    rows = f.snapshot()
    assert len(rows) == 3
    for row in rows:
        rec = f.read_record(row)[0]
        assert rec is not None and len(rec["steps"]) == 3
        doc = api.api_calls(f, {"i": [str(row.i)]})
        assert doc["note"] is None
        solve = [c for c in doc["calls"] if c["kind"] == "solve"]
        assert [c["index"] for c in solve] == [0, 1, 2]
        # each step found by its text in the reply of the call that made it
        assert doc["steps"] == [{"step": n, "call": n - 1, "matched": "text"} for n in (1, 2, 3)]
        assert [c["step"] for c in solve] == [1, 2, 3]
        assert all(
            c["prompt_tokens"] and c["model"].startswith("openai-compatible/test-model") for c in solve
        )
        call = api.api_call(f, {"i": [str(row.i)], "index": ["1"]})
        msgs = call["call"]["messages"]
        assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"  # the whole request, as sent
        assert [m["role"] for m in msgs].count("assistant") == 1
        assert "pick the row" in call["call"]["text"] and "final_answer" not in call["call"]["text"]
        assert rec["steps"][1]["code"] in call["call"]["text"]
    # another task's key never gives this one's calls; a run without calls.jsonl says so
    os.rename(agent_run / "agent" / "calls.jsonl", agent_run / "agent" / "calls.jsonl.off")
    try:
        api2 = ViewApi(agent_run)
        api2.index.scan()
        f2 = api2.run("agent")
        assert "no calls.jsonl" in api2.api_calls(f2, {"i": ["0"]})["note"]
    finally:
        os.rename(agent_run / "agent" / "calls.jsonl.off", agent_run / "agent" / "calls.jsonl")


def test_thoughts_are_safe_markdown_and_code_is_highlighted(agent_run: Path) -> None:
    api = ViewApi(agent_run)
    api.index.scan()
    f = api.run("agent")
    doc = api.api_record(f, {"i": [str(f.snapshot()[0].i)]})
    render = doc["render"]
    tree = render["/steps/0/thought"]["md"]

    def walk(nodes: list[Any], out: list[Any]) -> None:
        for n in nodes:
            out.append(n)
            if isinstance(n, dict):
                walk(n.get("c", []), out)

    nodes: list[Any] = []
    walk(tree, nodes)
    tags = {n["t"] for n in nodes if isinstance(n, dict)}
    assert {"strong", "code", "ul", "li", "a", "p"} <= tags <= TAGS
    text = "".join(n for n in nodes if isinstance(n, str))
    assert XSS in text  # the markup is text, whole
    assert "[bad](javascript:alert(1))" in text and "[image: img](http://127.0.0.1:9/x.png)" in text
    assert [n["a"]["href"] for n in nodes if isinstance(n, dict) and n["t"] == "a"] == [
        "https://example.org/x"
    ]
    assert all(
        set(n.get("a", {})) <= {"href", "start", "align", "lang"} for n in nodes if isinstance(n, dict)
    )
    rec = doc["record"]
    code = render["/steps/0/code"]["hl"]
    assert "".join(t for _c, t in code) == rec["steps"][0]["code"]
    assert ["kn", "import"] in code and any(c.startswith("s") and "numbers.csv" in t for c, t in code)
    obs = render["/steps/0/observation"]["hl"]
    assert "".join(t for _c, t in obs) == rec["steps"][0]["observation"]
    assert any(c == "m" for c, _t in obs)  # the shape's numbers
    assert render["/pipeline_code"]["hl"]


def test_highlight_and_markdown_keep_every_character() -> None:
    text = "x = '\u202eexe.png'  # \x1b[31m<b>\n\tprint(x)\r\n"
    assert "".join(t for _c, t in highlight(text)).replace("\r", "") == text.replace("\r", "")
    assert "".join(
        t
        for _c, t in highlight("Traceback (most recent call last):\n  File \"a\"\nKeyError: 'k'\n", "output")
    )
    assert highlight("x" * 300_000) is None  # too long: shown plain
    md = markdown("<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>")
    assert md == [
        {"t": "p", "c": ["<script>alert(1)</script>"]},
        {"t": "p", "c": ["<img src=x onerror=alert(2)>"]},
    ]
    fence = markdown("```python\nprint(1)\n```")[0]
    assert fence["t"] == "pre" and fence["c"][0]["hl"][0] == ["nb", "print"]
    assert record_render(
        {"steps": [{"thought": "**a**", "code": "x=1"}], "transcript": [{"response": "# t"}]}
    ).keys() == {"/steps/0/thought", "/steps/0/code", "/transcript/0/response"}


def test_a_big_record_is_cut_and_whole_one_request_away(results: Path) -> None:
    import urllib.request

    from kramabench.view.server import ViewServer

    big = "line of a huge reply\n" * 600_000  # 12.6 MB
    many = list(range(50_000))
    rec = record(
        "big",
        "legal",
        "legal-hard-1",
        1.0,
        answer=many,
        extra={"steps": [{"step": 1, "outcome": "ok", "observation": big, "code": "print(1)"}]},
    )
    write_run(results, "big", [rec], manifest_doc=manifest("big"))
    with ViewServer(results) as server:

        def get(path: str) -> tuple[bytes, dict[str, str]]:
            with urllib.request.urlopen(server.url + path.lstrip("/")) as r:
                return r.read(), {k.lower(): v for k, v in r.headers.items()}

        body, _ = get("/api/runs/big/record?i=0")
        assert len(body) < 3_000_000
        doc = json.loads(body)
        assert doc["cuts"] == {"/answer": {"items": 50_000}, "/steps/0/observation": {"chars": len(big)}}
        assert len(doc["record"]["answer"]) == 500 and doc["record"]["answer"][:3] == [0, 1, 2]
        assert doc["record"]["steps"][0]["observation"] == big[:20_000]
        whole, _ = get("/api/runs/big/field?i=0&path=/steps/0/observation")
        assert json.loads(whole)["value"] == big
        text, headers = get("/api/runs/big/field?i=0&path=/steps/0/observation&format=text")
        assert text.decode() == big and headers["content-type"].startswith("text/plain")
        assert (
            "sandbox" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"
        )
        assert json.loads(get("/api/runs/big/field?i=0&path=/answer")[0])["value"] == many
        raw, headers = get("/api/runs/big/raw?i=0")
        assert json.loads(raw) == rec and "sandbox" in headers["content-security-policy"]


def test_cut_paths_are_json_pointers() -> None:
    rec = {"a/b": {"~x": ["y" * 30]}, "l": list(range(9))}
    cut, cuts = cut_record(rec, text_chars=10, list_items=4)
    assert cuts == {"/a~1b/~0x/0": {"chars": 30}, "/l": {"items": 9}}
    assert value_at(rec, "/a~1b/~0x/0") == "y" * 30 and cut["l"] == [0, 1, 2, 3]
    assert pointer(["a/b", "~x", 0]) == "/a~1b/~0x/0"
    # once the budget is spent, texts are cut shorter
    cut, cuts = cut_record({"x": ["a" * 50] * 4}, text_chars=100, budget_chars=120, small_chars=5)
    assert [len(s) for s in cut["x"]] == [50, 50, 50, 5]


def test_the_tables_by_domain_and_difficulty_are_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kramabench.report.load import load_run
    from kramabench.report.tables import difficulty_table, domain_table
    from kramabench.run.runner import RunOptions
    from kramabench.run.setup import RunConfig, prepare
    from tests.run.synth import install_scripted

    system, _ = install_scripted(tmp_path, monkeypatch)
    root = make_workload(tmp_path / "wl", "alpha", n=5, none=(1, 3))
    make_workload(root, "beta", n=4, crash=(0,))
    # a hard task in each domain (the difficulty is read from the task id, as the report reads it)
    for d in ("alpha", "beta"):
        p = root / "workload" / f"{d}.json"
        tasks = json.loads(p.read_text())
        tasks[-1]["id"] = tasks[-1]["id"].replace("-easy-", "-hard-")
        p.write_text(json.dumps(tasks))
    res = tmp_path / "res"
    prepare(RunConfig(workload=str(root), system=system, results=res, run_id="t", options=RunOptions())).run()
    # the records in another order than the tasks' (as concurrent workers write them): the intervals still the report's
    lines = (res / "t" / "records.jsonl").read_text().splitlines()
    (res / "t" / "records.jsonl").write_text("\n".join(lines[::-1]) + "\n")
    api = ViewApi(res)
    api.index.scan()
    f = api.run("t")
    doc = api.api_breakdown(f)
    run = load_run(res / "t")
    for table, mine in (
        (domain_table([run], "end-to-end"), doc["domains"]),
        (difficulty_table([run], "end-to-end"), doc["difficulties"]),
    ):
        assert table is not None
        assert [c["label"] for c in mine] == table.columns
        for cell, ref in zip(mine, table.rows[0].cells, strict=True):
            got = cell["verified"]
            assert (got["score"], got["ci_low"], got["ci_high"], got["n_scored"], got["n_unscored"]) == (
                ref.mean,
                ref.lo,
                ref.hi,
                ref.n,
                ref.n_unscored,
            ), cell["label"]
    # the score of what a filter keeps: one domain is that domain's cell, to the digit
    rows = api.api_rows(f, {"domain": ["beta"]})
    beta = next(c for c in doc["domains"] if c["label"] == "beta")
    assert rows["kept"]["verified"] == beta["verified"] and rows["kept"]["official"] == beta["official"]
    assert (
        api.api_rows(f, {"sort": ["-verified"]})["kept"] is None
    )  # no filter: the whole run's, in the summary
    both = api.api_rows(f, {"domain": ["beta"], "q": ["beta-easy"]})["kept"]["verified"]
    assert both["tasks"] == 3
