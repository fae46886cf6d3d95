"""``kramabench workloads validate|list|schema`` through the real CLI (in-process and as a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app


@pytest.fixture
def cli():
    """``cli(*args)`` runs the kramabench CLI in-process; wide terminal so table cells do not wrap."""
    app = build_app()
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"})

    return invoke


def make_root(base: Path, tasks, *, domain="demo", files=None, text=None, lake=True) -> Path:
    root = base / "root"
    (root / "workload").mkdir(parents=True, exist_ok=True)
    path = root / "workload" / f"{domain}.json"
    path.write_text(text if text is not None else json.dumps(tasks))
    if lake:
        for rel, content in (files or {"sales.csv": "a;b\n1;2\n"}).items():
            p = root / "data" / domain / "input" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(content)
    return root


def task(tid="demo-easy-1", **over):
    t = {
        "id": tid,
        "query": "How much?",
        "answer": 3,
        "answer_type": "numeric_exact",
        "data_sources": ["sales.csv"],
        "subtasks": [
            {"id": f"{tid}-1", "step": "load", "query": "Which file?", "answer": "sales.csv",
             "answer_type": "string_exact", "data_sources": ["./"]},
        ],
    }  # fmt: skip
    t.update(over)
    return t


def one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("error: ")
    assert "Traceback" not in result.output
    for n in needles:
        assert n in err, err
    return err


def test_validate_clean_root_exits_0(cli, tmp_path):
    root = make_root(tmp_path, [task(), task("demo-hard-2")])
    r = cli("workloads", "validate", str(root))
    assert r.exit_code == 0, r.output
    assert "demo: 0 finding(s)" in r.stdout
    line = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("│ demo"))
    assert [c.strip() for c in line.strip("│ ").split("│")][:4] == ["demo", "2", "2", "0"]


def test_validate_prints_findings_and_exits_1(cli, tmp_path):
    bad = task("demo-hard-2", answer="10.87", data_sources="Sales.csv")
    root = make_root(tmp_path, [task(), bad])
    r = cli("workloads", "validate", str(root))
    assert r.exit_code == 1, r.output
    out = r.stdout
    assert "demo-hard-2" in out and "store the number 10.87" in out and "write 'sales.csv'" in out
    assert "[answer_type_mismatch]" in out and "[data_source_case]" in out and "[data_sources_string]" in out
    assert "by code: " in out and "data_source_case 1" in out
    for header in ("severity", "id", "field", "message", "suggestion"):
        assert header in out


def test_validate_json(cli, tmp_path):
    root = make_root(tmp_path, [task(answer=[1, 2])])
    r = cli("workloads", "validate", str(root), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["root"] == str(root)
    [d] = doc["domains"]
    assert (d["domain"], d["tasks"], d["subtasks"], d["errors"]) == ("demo", 1, 1, 1)
    [f] = d["findings"]
    assert f["code"] == "answer_type_mismatch" and f["task_id"] == "demo-easy-1" and f["field"] == "answer"
    assert f["suggestion"] == "answer_type list_exact"


def test_warnings_only_exit_0_and_info_hidden_unless_all(cli, tmp_path):
    files = {"deep/er/sales.csv": "x"}
    root = make_root(tmp_path, [task(data_sources="deep/er/sales.csv"), task("demo-easy-2", data_sources=["sales.csv"])],
                     files=files)  # fmt: skip
    r = cli("workloads", "validate", str(root))
    assert r.exit_code == 0, r.output
    assert "[data_sources_string]" in r.stdout and "[data_source_nested]" not in r.stdout
    assert "1 info hidden (--all)" in r.stdout
    r = cli("workloads", "validate", str(root), "--all")
    assert "[data_source_nested]" in r.stdout and "write 'deep/er/sales.csv'" in r.stdout


def test_errata_applied_reported_and_no_errata(cli, tmp_path):
    root = make_root(tmp_path, [task(answer="3")])
    (root / "errata.toml").write_text(
        '[[erratum]]\ndomain = "demo"\ntask = "demo-easy-1"\nfield = "answer"\nold = "3"\nnew = 3\n'
        'reason = "number stored as a string"\n'
    )
    r = cli("workloads", "validate", str(root), "--show-errata")
    assert r.exit_code == 0, r.output
    assert "1 erratum/errata applied" in r.stdout and "number stored as a string" in r.stdout
    doc = json.loads(cli("workloads", "validate", str(root), "--json").stdout)
    assert doc["domains"][0]["errata_applied"] == 1 and doc["domains"][0]["errata"][0]["new"] == 3
    r = cli("workloads", "validate", str(root), "--no-errata")
    assert r.exit_code == 1 and "store the number 3" in r.stdout
    one_line_error(
        cli("workloads", "validate", str(root), "--no-errata", "--errata", "x.toml"), "exclude each other"
    )


def test_domain_option(cli, tmp_path):
    root = make_root(tmp_path, [task()])
    (root / "workload" / "other.json").write_text(json.dumps([task("other-easy-1", answer="x")]))
    (root / "data" / "other" / "input").mkdir(parents=True)
    assert cli("workloads", "validate", str(root)).exit_code == 1
    assert cli("workloads", "validate", str(root), "--domain", "demo").exit_code == 0
    one_line_error(cli("workloads", "validate", str(root), "-d", "legal"), "no domain 'legal'", "demo, other")


# -- unusable input: one line on stderr, exit 2, no traceback --------------------------------------------


def test_json_syntax_error(cli, tmp_path):
    root = make_root(tmp_path, None, text='[{"id": "demo-easy-1",, }]')
    one_line_error(cli("workloads", "validate", str(root)), "demo.json", "invalid JSON at line 1, column 23")


def test_top_level_not_a_list(cli, tmp_path):
    root = make_root(tmp_path, None, text='{"id": "demo-easy-1"}')
    one_line_error(
        cli("workloads", "validate", str(root)), "demo.json", "top level is an object", "expected a JSON list"
    )


def test_missing_lake(cli, tmp_path):
    root = make_root(tmp_path, [task()], lake=False)
    one_line_error(cli("workloads", "validate", str(root)), "demo.json", "data lake folder", "is missing")
    one_line_error(cli("workloads", "list", str(root)), "data lake folder")


def test_missing_root_and_not_a_root(cli, tmp_path):
    one_line_error(
        cli("workloads", "validate", str(tmp_path / "nope")), "no such folder and not a bundled workload"
    )
    one_line_error(cli("workloads", "validate", str(tmp_path)), "no workload/ folder")
    (tmp_path / "workload").mkdir()
    one_line_error(cli("workloads", "list", str(tmp_path)), "no <domain>.json files")


def test_malformed_errata_file(cli, tmp_path):
    root = make_root(tmp_path, [task()])
    (root / "errata.toml").write_text("[[erratum]\n")
    one_line_error(cli("workloads", "validate", str(root)), "errata.toml", "invalid TOML")


def test_task_without_id_and_non_object_are_findings(cli, tmp_path):
    no_id = task()
    del no_id["id"]
    root = make_root(tmp_path, [task(), no_id, "text"])
    r = cli("workloads", "validate", str(root), "--json")
    assert r.exit_code == 1
    msgs = {f["code"]: f["message"] for f in json.loads(r.stdout)["domains"][0]["findings"]}
    assert msgs["missing_id"].startswith("task #2 (index 1) has no usable id (missing)")
    assert msgs["task_not_object"] == "task #3 (index 2) is a string, not an object; skipped"


def test_one_unusable_domain_does_not_hide_the_others(cli, tmp_path):
    root = make_root(tmp_path, [task()])
    (root / "workload" / "broken.json").write_text("[")
    (root / "data" / "broken" / "input").mkdir(parents=True)
    r = cli("workloads", "validate", str(root), "--json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [d["domain"] for d in doc["domains"]] == ["demo"]
    assert doc["load_errors"][0]["domain"] == "broken" and "broken.json: invalid JSON" in r.stderr


def test_subprocess_no_traceback(tmp_path, repo_root):
    root = make_root(tmp_path, None, text="[1, 2,")
    p = subprocess.run(
        [sys.executable, "-m", "kramabench", "workloads", "validate", str(root)],
        cwd=repo_root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") == 0
    assert "demo.json: invalid JSON at line 1" in p.stderr


# -- list, schema, bundled names -----------------------------------------------------------------------


def test_list(cli, tmp_path):
    sub = {"id": "demo-hard-2-1", "step": "s", "query": "q", "answer": ["a"], "answer_type": "list_exact",
           "data_sources": ["./"]}  # fmt: skip
    root = make_root(tmp_path, [task(), task("demo-hard-2", subtasks=[sub]), task("demo-hard-3")])
    r = cli("workloads", "list", str(root), "--json")
    assert r.exit_code == 0, r.output
    [d] = json.loads(r.stdout)["domains"]
    assert (d["tasks"], d["subtasks"], d["lake_files"], d["errors"]) == (3, 3, 1, 0)
    assert d["answer_types"] == {"list_exact": 1, "numeric_exact": 3, "string_exact": 2}
    assert d["difficulty"] == {"easy": 1, "hard": 2}
    r = cli("workloads", "list", str(root))
    assert r.exit_code == 0 and "numeric_exact 3" in r.stdout and "easy 1, hard 2" in r.stdout


def test_schema(cli, tmp_path):
    r = cli("workloads", "schema")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["title"] == "Workload" and "tasks" in doc["properties"]
    assert set(doc["$defs"]["AnswerType"]["enum"]) == {
        "string_exact", "string_approximate", "numeric_exact", "numeric_approximate", "list_exact", "list_approximate",
    }  # fmt: skip
    assert {"Task", "Subtask", "KeyFunctionality", "Finding"} <= set(doc["$defs"])
    out = tmp_path / "task.schema.json"
    assert cli("workloads", "schema", "--model", "task", "-o", str(out)).exit_code == 0
    assert json.loads(out.read_text())["title"] == "Task"
    one_line_error(cli("workloads", "schema", "--model", "nope"), "choose one of")


def test_bundled_name_resolves(cli, tmp_path, monkeypatch):
    import kramabench.workload.suites as suites

    bundled = tmp_path / "bundled"
    make_root(bundled, [task()])
    (bundled / "root").rename(bundled / "tiny")
    (bundled / "notasuite").mkdir()
    monkeypatch.setattr(suites, "bundled_dir", lambda: bundled)
    assert suites.bundled_suites() == ["tiny"]
    assert suites.resolve_workload_root("tiny") == bundled / "tiny"
    r = cli("workloads", "list", "tiny", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["root"] == str(bundled / "tiny")
    one_line_error(cli("workloads", "validate", "tinyy"), "bundled workloads: tiny")


def test_list_without_a_root_shows_the_bundled_and_fetched_suites(cli, tmp_path, monkeypatch):
    import kramabench.workload.suites as suites
    from kramabench.workload.fetch import DEFAULT_REF

    bundled = tmp_path / "bundled"
    make_root(bundled, [task(), task("demo-easy-2")])
    (bundled / "root").rename(bundled / "tiny")
    monkeypatch.setattr(suites, "bundled_dir", lambda: bundled)
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "home"))
    r = cli("workloads", "list")
    assert r.exit_code == 0, r.stdout
    assert (
        "tiny" in r.stdout
        and "bundled" in r.stdout
        and "not fetched (kramabench fetch kramabench" in r.stdout
    )
    # fetched: the default ref is `kramabench`, another ref `kramabench@<ref>`
    for ref in (DEFAULT_REF, "abc123"):
        make_root(tmp_path / "home" / "official", [task()])
        (tmp_path / "home" / "official" / "root").rename(tmp_path / "home" / "official" / ref)
    doc = json.loads(cli("workloads", "list", "--json").stdout)
    got = [(s["name"], s["kind"], s["domains"]) for s in doc["suites"]]
    assert got == [
        ("tiny", "bundled", {"demo": 2}),
        ("kramabench", "fetched", {"demo": 1}),
        ("kramabench@abc123", "fetched", {"demo": 1}),
    ]
    assert "not fetched" not in cli("workloads", "list").stdout


def test_the_real_bundled_suites_are_listed(cli):
    from kramabench import data_dir

    names = {s["name"] for s in json.loads(cli("workloads", "list", "--json").stdout)["suites"]}
    on_disk = {p.name for p in data_dir("workloads").iterdir() if (p / "workload").is_dir()}
    assert {"mini", "planted"} <= names and on_disk <= names


def test_version(cli):
    from importlib.metadata import version

    r = cli("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"kramabench {version('kramabench')}"


@pytest.mark.shared
def test_official_workloads_through_cli(cli, shared_kramabench):
    r = cli("workloads", "validate", str(shared_kramabench), "-d", "archeology", "-d", "biomedical",
            "-d", "environment", "-d", "legal", "--json")  # fmt: skip
    assert r.exit_code == 0, r.stdout[-2000:]
    doc = json.loads(r.stdout)
    assert [(d["domain"], d["tasks"], d["subtasks"]) for d in doc["domains"]] == [
        ("archeology", 12, 71), ("biomedical", 9, 38), ("environment", 20, 148), ("legal", 30, 188),
    ]  # fmt: skip
    assert all(d["errata_applied"] > 0 and d["errors"] == 0 for d in doc["domains"])
    assert doc["domains"][0]["not_reproducible"] > 0
    r = cli("workloads", "validate", str(shared_kramabench), "-d", "legal", "--no-errata")
    assert r.exit_code == 1 and "legal-easy-21-7" in r.stdout


def test_official_name_resolves_to_the_fetched_root(cli, tmp_path, monkeypatch):
    import types

    import kramabench.workload.suites as suites

    class FetchError(Exception):
        pass

    fetched = make_root(tmp_path, [task()])
    calls = []

    def fetched_root(ref=None):
        calls.append(ref)
        if ref == "missing":
            raise FetchError(
                "the official KramaBench workloads are not fetched yet; run: kramabench fetch kramabench"
            )
        return fetched

    fake = types.ModuleType("kramabench.workload.fetch")
    fake.FetchError, fake.fetched_root = FetchError, fetched_root
    monkeypatch.setitem(sys.modules, "kramabench.workload.fetch", fake)
    import kramabench.workload

    monkeypatch.setattr(
        kramabench.workload, "fetch", fake, raising=False
    )  # the real one may be imported already
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kramabench" / "workload").mkdir(parents=True)  # like the repo's package folder: no data lake
    assert suites.resolve_workload_root("kramabench") == fetched
    assert suites.resolve_workload_root("kramabench@abc123") == fetched and calls == [None, "abc123"]
    r = cli("workloads", "list", "kramabench", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["root"] == str(fetched)
    one_line_error(cli("workloads", "validate", "kramabench@missing"), "not fetched yet", "kramabench fetch")


# -- narrow terminals and pipes ------------------------------------------------------------------------


def _narrow(*args: str, columns: int = 80):
    return CliRunner().invoke(build_app(), list(args), env={"COLUMNS": str(columns), "NO_COLOR": "1"})


def test_validate_readable_in_80_columns(tmp_path):
    long_name = "State MSA Identity Theft data/" + "x" * 30 + ".csv"
    bad = task("demo-hard-2", answer="10.87", data_sources="SALES.csv")
    bad["subtasks"][0]["data_sources"] = ["state msa identity theft data/" + "x" * 30 + ".csv"]
    root = make_root(tmp_path, [task(), bad], files={"sales.csv": "a\n", long_name: "b\n"})
    r = _narrow("workloads", "validate", str(root))
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80, "\n".join(ln for ln in lines if len(ln) > 80)
    assert not any(ln != ln.rstrip() for ln in lines if not ln.startswith(("┃", "│", "┏", "┡", "└"))), (
        "trailing blanks"
    )
    # each finding: a header line with severity, id, field and code, then message and suggestion indented
    i = next(
        k
        for k, ln in enumerate(lines)
        if ln.startswith("error") and "[data_source_case]" in ln and "demo-hard-2-1" in ln
    )
    assert lines[i].split() == ["error", "demo-hard-2-1", "data_sources", "[data_source_case]"]
    end = next(k for k in range(i + 1, len(lines)) if not lines[k].startswith("    "))
    block = " ".join(ln.strip() for ln in lines[i + 1 : end])
    assert "differs only in letter case" in block
    assert f"suggestion: write '{long_name}'" in block  # wrapped at spaces only: joining restores it
    hdr = next(ln for ln in lines if "[answer_type_mismatch]" in ln)
    assert hdr.split()[:3] == ["error", "demo-hard-2", "answer"]
    assert "suggestion: store the number 10.87" in r.stdout
    # the summary keeps whole domain names and counts
    row = next(ln for ln in lines if ln.startswith("│ demo"))
    assert [c.strip() for c in row.strip("│ ").split("│")][:4] == ["demo", "2", "2", "3"]


def test_validate_piped_is_plain_and_narrow(tmp_path, repo_root):
    root = make_root(tmp_path, [task(answer=[1, 2])])
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.run(
        [sys.executable, "-m", "kramabench", "workloads", "validate", str(root)],
        cwd=repo_root, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert p.returncode == 1, p.stderr
    assert "\x1b[" not in p.stdout  # no colour codes into a pipe
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 80
    assert "error    demo-easy-1  answer  [answer_type_mismatch]" in p.stdout
    assert "suggestion: answer_type list_exact" in p.stdout


def test_load_error_prints_no_empty_summary(tmp_path):
    root = make_root(tmp_path, None, text="[1, 2,")
    r = _narrow("workloads", "validate", str(root))
    assert r.exit_code == 2 and r.stdout.strip() == "", r.stdout
    assert "invalid JSON at line 1" in r.stderr


def test_list_readable_in_80_columns(tmp_path):
    subs = [{"id": f"demo-hard-2-{i}", "step": "s", "query": "q", "answer": a, "answer_type": at, "data_sources": ["./"]}
            for i, (a, at) in enumerate([(["a"], "list_exact"), ([1.5], "list_approximate"), ("x", "string_approximate"),
                                         (2.5, "numeric_approximate")], 1)]  # fmt: skip
    root = make_root(
        tmp_path, [task(), task("demo-hard-2", subtasks=subs)], domain="a-rather-long-domain-name"
    )
    r = _narrow("workloads", "list", str(root))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert "a-rather-long-domain-name: 2 tasks, 5 subtasks, 1 lake files, 0 errors" in lines
    text = " ".join(ln.strip() for ln in lines)
    for at in ("list_approximate 1", "list_exact 1", "numeric_approximate 1", "numeric_exact 2",
               "string_approximate 1", "string_exact 1", "easy 1, hard 1"):  # fmt: skip
        assert at in text, text


def test_folder_named_like_a_domain_file(cli, tmp_path):
    root = make_root(tmp_path, [task()])
    (root / "workload" / "demo.json").unlink()
    (root / "workload" / "demo.json").mkdir()
    one_line_error(
        cli("workloads", "validate", str(root)), "no <domain>.json files", "demo.json: folder(s), not files"
    )
    one_line_error(
        cli("workloads", "validate", str(root), "-d", "demo"), "demo.json: is a folder, not a workload file"
    )


def test_exported_schema_is_valid_and_describes_loaded_workloads(cli, tmp_path, repo_root):
    import jsonschema

    from kramabench.workload import load_workload

    doc = json.loads(cli("workloads", "schema").stdout)
    jsonschema.Draft202012Validator.check_schema(doc)
    root = make_root(tmp_path, [task(), task("demo-hard-2", answer=[1, 2], answer_type="list_exact",
                                             data_sources="Sales.csv")])  # fmt: skip
    for wl in (load_workload(root, "demo"), load_workload(repo_root / "workloads" / "mini", "harbor")):
        jsonschema.validate(wl.model_dump(mode="json"), doc)  # findings, errata and all
    bad = load_workload(root, "demo").model_dump(mode="json")
    bad["tasks"][0]["answer_type"] = "numeric_fuzzy"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, doc)
    task_doc = json.loads(cli("workloads", "schema", "--model", "task").stdout)
    jsonschema.validate(load_workload(root, "demo").tasks[0].model_dump(mode="json"), task_doc)
