"""The Auditor session's own rules: what a bad, contradictory or missing report becomes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

from kramabench.audit.auditor import AuditorOptions, FailureCase, audit_case  # noqa: E402
from kramabench.audit.reliability import cohen_kappa  # noqa: E402
from kramabench.audit.taxonomy import normalise  # noqa: E402


def test_cohen_kappa_multi_class() -> None:
    assert cohen_kappa([("a", "a"), ("b", "b"), ("c", "c")]) == 1.0
    assert cohen_kappa([]) is None
    # observed 0.5, expected 0.5 -> 0
    assert cohen_kappa([("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]) == 0.0
    assert cohen_kappa([("a", "a"), ("a", "a")]) == 1.0


def test_taxonomy_spelling_and_sub_kind() -> None:
    assert normalise("Join error", None) == ("join-error", None, [])
    cat, sub, problems = normalise("evaluation_false_positive", "order")
    assert (cat, sub, problems) == ("evaluation-false-positive", "order", [])
    assert normalise("evaluation-false-positive", None)[2]
    assert normalise("bad luck", None)[0] is None


def _case() -> FailureCase:
    return FailureCase(domain="lab", task_id="lab-easy-2", question=scripted.TASKS["lab-easy-2"]["query"],
                       answer_type="numeric_exact", gold=93.2, system_answer=39.2, lake=scripted.lake_path())  # fmt: skip


@pytest.fixture(scope="module")
def sandbox():  # noqa: ANN201
    from kramabench.sandbox.registry import get_sandbox

    sb = get_sandbox("local")
    yield sb
    sb.close()


@pytest.mark.api
def test_bad_reports_are_recorded_not_trusted(openai_server, sandbox) -> None:  # noqa: ANN001
    from kramabench.models import get_model

    model = get_model(f"openai-compatible/a@{openai_server.base_url}", cache=False)
    # a contradiction: "system" with a benchmark category -> the category decides, the problem is recorded;
    # a derivation that does not print the gold is not "reproduced", whatever the model says
    report = {"attribution": "system", "category": "gold-calculation-error", "root_cause": "r",
              "derivation_code": "print(12)"}  # fmt: skip
    openai_server.enqueue("```json\n" + json.dumps(report) + "\n```")
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=2), auditor="a")
    assert rep.attribution == "benchmark" and any("contradicts" in p for p in rep.problems)
    assert rep.derivation.ran and rep.derivation.printed == 12 and not rep.gold_reproduced

    # no report within the turns: undecided, said so
    openai_server.enqueue("I think it is fine.", "Still thinking.")
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=2), auditor="a")
    assert rep.attribution == "undecided" and "no JSON report" in rep.problems[0] and rep.turns == 2

    # an unknown category: undecided, with the known ones named
    openai_server.enqueue('```json\n{"attribution": "benchmark", "category": "cosmic rays"}\n```')
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=1), auditor="a")
    assert rep.attribution == "undecided" and "unknown category" in rep.problems[0]

    # code that crashes: the error goes back to the auditor, the session goes on
    openai_server.enqueue("```python\nraise SystemExit('boom')\n```",
                          '```json\n{"attribution": "system", "category": "flawed-logic"}\n```')  # fmt: skip
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=3), auditor="a")
    assert rep.runs == 1 and rep.attribution == "system"
    assert "boom" in openai_server.requests[-1].body["messages"][-1]["content"]


@pytest.mark.api
def test_model_error_ends_the_session_as_undecided(openai_server, sandbox) -> None:  # noqa: ANN001
    from kramabench.models import get_model
    from kramabench.testing import Reply

    model = get_model(f"openai-compatible/a@{openai_server.base_url}", cache=False)
    openai_server.enqueue(Reply.error(400, "bad request"))
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=2), auditor="a")
    assert rep.attribution == "undecided" and rep.problems and "model error" in rep.problems[0]


def test_long_text_is_cut_with_a_marker_and_never_mid_word() -> None:
    from kramabench.files import clip_words, head_tail

    out = "\n".join(f"line {i}" for i in range(5000))
    cut = head_tail(out, 3000)
    assert len(cut) < 3100 and cut.startswith("line 0\n") and cut.endswith("line 4999")
    assert "characters cut here" in cut and "\nline 4998\n" in cut
    head, rest = cut.split("\n… [", 1)
    n, tail = rest.split(" characters cut here] …\n", 1)
    assert len(head) + int(n.replace(",", "")) + len(tail) == len(out)  # the marker counts what it leaves out
    assert head_tail("short", 3000) == "short"
    text = "the gold counts the header row as a data row in every one of the seven files"
    assert clip_words(text, 30) == "the gold counts the header…" and clip_words(text, 300) == text
    assert not clip_words("x" * 50, 20).endswith(" …") and len(clip_words("x" * 50, 20)) == 20


@pytest.mark.api
def test_the_auditor_sees_the_head_and_tail_of_long_output(openai_server, sandbox) -> None:  # noqa: ANN001
    from kramabench.models import get_model

    model = get_model(f"openai-compatible/a@{openai_server.base_url}", cache=False)
    openai_server.enqueue(
        "```python\nfor i in range(5000):\n    print(f'row {i}')\n```",
        '```json\n{"attribution": "system", "category": "flawed-logic", "root_cause": "r"}\n```',
    )
    rep = audit_case(_case(), model, sandbox, AuditorOptions(max_turns=3), auditor="a")
    fed = openai_server.requests[-1].body["messages"][-1]["content"]
    assert "row 0\n" in fed and "row 4999" in fed and "characters cut here" in fed
    run = next(e for e in rep.transcript if "ran" in e)
    assert (
        "row 4999" in run["stdout"]
        and "characters cut here" in run["stdout"]
        and "range(5000)" in run["code"]
    )
