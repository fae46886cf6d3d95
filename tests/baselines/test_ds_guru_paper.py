"""DS-Guru as the paper describes it: what each variant sends, the self-correction conversation, replies
cut at the token limit, and the prompt defects (multi-line items, repeated folders, delimiters, secrets).
The real openai client talks to the local test server; programs run in the real local sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kramabench.baselines.ds_guru import HEADING_ERROR, HEADING_OUTPUT, build_system
from kramabench.lake import estimate_tokens
from kramabench.systems import SubtaskInput, TaskInput
from kramabench.testing import Reply

pytestmark = pytest.mark.api

GOOD = "import json\nprint(json.dumps({'main-task': 1}))\n"
CRASH = "import json\nraise ValueError('boom in the pipeline')\n"
SILENT = "import json\nprint('no json here')\n"


def reply(code: str) -> str:
    return (
        'Reasoning: step by step.\n```json\n[{"id": "main-task", "query": "q"}]\n```\n```python\n'
        + code
        + "```\n"
    )


def files_of(lake: Path) -> list[str]:
    return sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())


def ask(lake: Path, query: str = "How many rows are there?", **kw) -> TaskInput:
    return TaskInput(query=query, lake_root=lake, files=files_of(lake), **kw)


def guru(name: str, model, sandbox, tmp_path: Path, **kw):
    return build_system(name, model=model, sandbox=sandbox, lake_cache_dir=str(tmp_path / "lakecache"), **kw)


def facts_of(out) -> dict:
    return next(t for t in out.transcript if t["type"] == "prompt_facts")


@pytest.fixture
def big_lake(tmp_path: Path) -> Path:
    """A table of 250 rows and one of 40 rows, a text file of 300 lines, a spreadsheet-like binary."""
    root = tmp_path / "big"
    root.mkdir()
    (root / "long.csv").write_text("id,value\n" + "".join(f"{i},{i * 1.5}\n" for i in range(250)))
    (root / "short.csv").write_text("id,name\n" + "".join(f"{i},name{i:03d}\n" for i in range(40)))
    (root / "log.txt").write_text("".join(f"log line {i:04d}\n" for i in range(300)))
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["sheetcol", "n"])
    wb.active.append(["SHEETCELL", 1])
    wb.save(root / "blob.xlsx")
    return root


def test_naive_sends_names_and_paths_only(openai_server, model, sandbox, big_lake, tmp_path):
    openai_server.enqueue(reply(GOOD))
    out = guru("ds-guru-naive", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 1 and len(openai_server.chat_requests) == 1  # the model once
    user = openai_server.chat_requests[0].messages[1]["content"]
    for f in ("long.csv", "short.csv", "log.txt", "blob.xlsx"):
        assert f"/lake/{f}" in user
    assert "name007" not in user and "log line 0001" not in user and "1.5" not in user  # no content
    assert facts_of(out)["lake_rendering"] == "names" and "snippet_rows" not in facts_of(out)


def test_simple_sends_whole_small_tables_and_the_first_n_rows_of_big_ones(
    openai_server, model, sandbox, big_lake, tmp_path
):
    openai_server.enqueue(reply(GOOD))
    out = guru("ds-guru-simple", model, sandbox, tmp_path).solve(ask(big_lake))
    user = openai_server.chat_requests[0].messages[1]["content"]
    assert "id (integer), name (string)" in user and "id (integer), value (float)" in user  # type-annotated
    assert "all 40 rows" in user and "39,name039" in user  # the whole table under N rows
    assert (
        "the first 100 of 250 rows: lines 1-101 of 251 as in the file" in user
        and "99,148.5" in user
        and "100,150.0" not in user
    )  # first N
    assert "log line 0099" in user and "log line 0100" not in user  # other text files: the first N lines
    assert "binary file" in user and "SHEETCELL" not in user  # the official code reads only CSV as tables
    facts = facts_of(out)
    assert facts["snippet_rows"] == 100 and "fewer than N rows" in facts["sampling_rule"]
    assert facts["lake_rendering"] == "paper" and facts["files_shortened_for_budget"] == 0
    assert "fewer than 100 rows" in user  # the rule is said in the prompt, with N
    # step-by-step reasoning, then the plan, then the program
    assert user.index("step by step") < user.index("The plan") < user.index("The program")
    assert "convert types" in user and "missing values" in user


def test_the_end_to_end_prompt_poses_no_subtask(openai_server, model, sandbox, big_lake, tmp_path):
    openai_server.enqueue(reply(GOOD))
    guru("ds-guru-simple", model, sandbox, tmp_path).solve(ask(big_lake))
    assert "# Subtasks" not in openai_server.chat_requests[0].messages[1]["content"]


def test_multi_line_subtasks_and_questions_stay_under_their_item(
    openai_server, model, sandbox, big_lake, tmp_path
):
    openai_server.enqueue(reply(GOOD), reply(GOOD))
    subs = [
        SubtaskInput(
            key="subtask-1", query="Which ids are even?\nExpected answer: {'ids': [...]}\n- not a new item"
        ),
        SubtaskInput(key="subtask-2", query="Count them."),
    ]
    s = guru("ds-guru-simple", model, sandbox, tmp_path)
    s.solve(ask(big_lake, subtasks=subs))
    user = openai_server.chat_requests[0].messages[1]["content"]
    assert (
        "- subtask-1: Which ids are even?\n  Expected answer: {'ids': [...]}\n  - not a new item\n- subtask-2: Count them."
        in user
    )
    s.solve(
        ask(big_lake, query="Count the even ids.", parent_query="Main question\nExpected answer: a number")
    )
    user = openai_server.chat_requests[1].messages[1]["content"]
    assert "- larger question: Main question\n  Expected answer: a number" in user


def test_self_correction_sends_the_conversation_so_far(openai_server, model, sandbox, big_lake, tmp_path):
    openai_server.enqueue(reply(CRASH), "I have no code for you.", reply(SILENT), reply(GOOD))
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 1 and out.iterations == 4
    reqs = [r.messages for r in openai_server.chat_requests]
    assert [len(m) for m in reqs] == [2, 4, 6, 8]  # every retry carries the whole conversation
    for i in range(1, 4):
        assert reqs[i][: len(reqs[i - 1])] == reqs[i - 1]
    fb1 = reqs[1][3]["content"]
    # the error under the error heading, the output under the output heading (not swapped)
    assert "boom in the pipeline" in fb1.split(HEADING_ERROR)[1].split(HEADING_OUTPUT)[0]
    assert "no Python program" in reqs[2][5]["content"]
    assert "did not print a JSON object" in reqs[3][7]["content"] and "no json here" in reqs[3][7]["content"]


def test_self_correction_stops_after_five_and_not_on_warnings(
    openai_server, model, sandbox, big_lake, tmp_path
):
    openai_server.default = reply(CRASH)
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer is None and out.iterations == 5 and len(openai_server.chat_requests) == 5
    openai_server.reset()
    warn = "import json, sys, warnings\nwarnings.warn('careful')\nprint('note', file=sys.stderr)\nprint(json.dumps({'main-task': 2}))\n"
    openai_server.enqueue(reply(warn))
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 2 and len(openai_server.chat_requests) == 1  # a warning on stderr is no error


def test_a_reply_cut_at_the_token_limit_is_recorded_and_told(
    openai_server, model, sandbox, big_lake, tmp_path
):
    cut = "Reasoning: first I will load\n```python\nimport json\nrows = ["
    openai_server.enqueue(Reply.truncated(cut), reply(GOOD))
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 1
    calls = [t for t in out.transcript if t["type"] == "model_call"]
    assert (
        calls[0]["truncated"] is True
        and calls[0]["finish_reason"] == "length"
        and calls[1]["truncated"] is False
    )
    told = openai_server.chat_requests[1].messages[-1]["content"]
    assert "cut off" in told and "finish_reason=length" in told and "4096" in told
    # in a one-shot variant, the error says so
    openai_server.reset()
    openai_server.enqueue(Reply.truncated("Reasoning: let me"))
    out = guru("ds-guru-simple", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer is None and "finish_reason=length" in out.error.message


@pytest.fixture
def astro_lake(tmp_path: Path) -> Path:
    """37 sibling folders each holding a .HDR + .sp3 pair (the astronomy kind), and distinct files."""
    root = tmp_path / "astro"
    for i in range(37):
        d = root / "orbits" / f"CH-OG-3-RSO_2003{i:03d}"
        d.mkdir(parents=True)
        (d / f"CH-OG-3-RSO_2003{i:03d}.HDR").write_text(
            "".join(f"HEADER KEY{k} = value{k}\n" for k in range(80))
        )
        (d / f"CH-OG-3-RSO_2003{i:03d}.sp3").write_text(
            "#cP2003  1  1  0  0  0.00000000     288 ORBIT IGS00 FIT  GFZ\n"
            + "".join(f"PL01 {k * 10.123:14.6f} {k * 3.21:14.6f} {k * 7.7:14.6f}\n" for k in range(400))
        )
    (root / "indices").mkdir()
    (root / "indices" / "kp_index.csv").write_text(
        "date,kp\n" + "".join(f"2003-01-{d:02d},{d % 9}.{d % 3}\n" for d in range(1, 29))
    )
    (root / "indices" / "solar_flux.tsv").write_text(
        "date\tf107\n" + "".join(f"2003-02-{d:02d}\t{100 + d}.5\n" for d in range(1, 29))
    )
    (root / "storms_eu.csv").write_text(
        "event;start;peak\nHalloween;2003-10-28;-383\nNovember;2003-11-20;-422\n"
    )
    (root / "README.txt").write_text("Orbits of CHAMP by day; Kp and F10.7 indices.\n")
    return root


def test_repeated_folders_fold_so_the_budget_reaches_the_distinct_files(
    openai_server, model, sandbox, astro_lake, tmp_path
):
    openai_server.enqueue(reply(GOOD))
    budget = 6000
    out = guru("ds-guru-simple", model, sandbox, tmp_path, prompt_budget_tokens=budget).solve(ask(astro_lake))
    msgs = openai_server.chat_requests[0].messages
    user = msgs[1]["content"]
    assert sum(estimate_tokens(m["content"]) for m in msgs) <= budget
    assert "37 folders under /lake/orbits/" in user and "1 .hdr file + 1 .sp3 file" in user.lower()
    assert user.count("CH-OG-3-RSO_2003") < 12  # the group is named once, not 74 files
    # the distinct files are shown with example values, each with its own delimiter
    assert "2003-01-05,5.2" in user and "kp (float)" in user
    assert "2003-02-03\t103.5" in user and "tab-separated" in user
    assert "Halloween;2003-10-28;-383" in user and "semicolon-separated" in user
    assert "Orbits of CHAMP" in user
    facts = facts_of(out)
    assert facts["repeated_folders"][0]["folders"] == 37 and facts["repeated_folders"][0]["files"] == 74
    assert facts["snippet_rows"] == 100


def test_the_rich_rendering_folds_the_same_way(openai_server, model, sandbox, astro_lake, tmp_path):
    openai_server.enqueue(reply(GOOD))
    guru("ds-guru-rich", model, sandbox, tmp_path, prompt_budget_tokens=6000).solve(ask(astro_lake))
    user = openai_server.chat_requests[0].messages[1]["content"]
    assert (
        "37 folders under /lake/orbits/" in user
        and "Halloween;2003-10-28;-383" in user
        and "2003-02-03\t103.5" in user
    )


def test_secrets_in_lake_files_are_masked_and_recorded(openai_server, model, sandbox, tmp_path):
    lake = tmp_path / "sec"
    lake.mkdir()
    (lake / "load_db.py").write_text(
        'import psycopg2\nconn = psycopg2.connect(host="db.example.org", user="analyst", password="Tr0ub4dor&3")\n'
        'API_KEY = "AKIAIOSFODNN7EXAMPLE"\nurl = "postgres://analyst:hunter2@db/x"\n'
    )
    (lake / "config.csv").write_text(
        "name,value\nendpoint,https://x.org\napi_token,ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
    )
    (lake / "data.csv").write_text("token_count,site\n3,A\n4,B\n")
    leak = "import json\nprint(open('/lake/load_db.py').read())\nraise SystemExit(1)\n"
    openai_server.enqueue(reply(leak), reply(GOOD))
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(lake))
    assert out.answer == 1
    sent = json.dumps([r.messages for r in openai_server.chat_requests])
    for secret in (
        "Tr0ub4dor&3",
        "AKIAIOSFODNN7EXAMPLE",
        "hunter2",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ):
        assert secret not in sent, secret
    assert "[MASKED]" in sent and "db.example.org" in sent and "token_count" in sent  # only the secrets go
    facts = facts_of(out)
    assert set(facts["secrets_masked"]) == {"load_db.py", "config.csv"} and facts["secrets_masked_count"] >= 4
    assert "password" in facts["secrets_masked"]["load_db.py"]


def test_a_runtime_error_after_the_answer_is_still_corrected(
    openai_server, model, sandbox, big_lake, tmp_path
):
    late = "import json\nprint(json.dumps({'main-task': 7}))\nraise RuntimeError('late failure')\n"
    openai_server.enqueue(reply(late), reply(GOOD))
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 1 and out.iterations == 2  # the error was fed back, the corrected run answers
    assert "late failure" in openai_server.chat_requests[1].messages[-1]["content"]
    # when no attempt runs cleanly, the answer printed before the failure is kept (and said to be)
    openai_server.reset()
    openai_server.default = reply(late)
    out = guru("ds-guru-self-correcting", model, sandbox, tmp_path, max_iterations=2).solve(ask(big_lake))
    assert out.answer == 7 and out.error is None and out.iterations == 2
    assert any(t["type"] == "answer_from_failed_run" for t in out.transcript)
    # a one-shot variant keeps it at once
    openai_server.reset()
    openai_server.enqueue(reply(late))
    out = guru("ds-guru-simple", model, sandbox, tmp_path).solve(ask(big_lake))
    assert out.answer == 7 and len(openai_server.chat_requests) == 1
