"""judge-check statistics: Cohen's kappa, flip rate, accuracy; the labelled set; scripted judge runs."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from kramabench.models import get_model
from kramabench.run.judge_check import (
    JudgeCheckError,
    cohen_kappa,
    flip_stats,
    load_labelled_set,
    run_judge_check,
)
from kramabench.scorers.design import DesignJudge
from kramabench.workload import resolve_workload_root

MINI = resolve_workload_root("mini")


def test_cohen_kappa_by_hand():
    # tp=20 fp=5 fn=10 tn=15: p_o = 0.7, p_label = 0.6, p_verdict = 0.5, p_e = 0.5 -> kappa 0.4
    pairs = [(True, True)] * 20 + [(False, True)] * 5 + [(True, False)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(True, True), (False, False)]) == pytest.approx(1.0)
    assert cohen_kappa([(True, False), (False, True)]) == pytest.approx(-1.0)
    # a judge that always says yes agrees only by chance: kappa 0
    assert cohen_kappa([(True, True)] * 9 + [(False, True)]) == pytest.approx(0.0)
    assert cohen_kappa([(True, True)] * 4) is None  # both constant: undefined
    assert cohen_kappa([]) is None


def test_flip_stats():
    items = [
        [True, True, True],
        [True, False, True],
        [None, False, False],
        [None, None, True],
        [False, None, True],
    ]
    flipped, eligible, rate = flip_stats(items)
    assert (flipped, eligible) == (2, 4)
    assert rate == pytest.approx(0.5)
    assert flip_stats([[None, True]]) == (0, 0, None)


def test_labelled_set_of_mini():
    cases = load_labelled_set(MINI)
    refs = [c for c in cases if c.kind == "reference"]
    broken = [c for c in cases if c.kind == "broken"]
    assert len(refs) == 23 and all(all(c.labels.values()) for c in refs)
    assert len(broken) >= 5
    for c in broken:
        assert not all(c.labels.values()), c.name
        assert c.code.strip() and c.code != (MINI / f"solutions/{c.task_id}.py").read_text()
    nodedupe = next(c for c in broken if c.name.endswith("harbor-easy-1-nodedupe.py"))
    assert nodedupe.labels == {"kf-1": True, "kf-2": False, "kf-3": False, "kf-4": True}
    assert {c.domain for c in load_labelled_set(MINI, domains=["grid"])} == {"grid"}


def _copy_root(tmp_path):
    root = tmp_path / "mini"
    shutil.copytree(MINI / "workload", root / "workload")
    shutil.copytree(MINI / "solutions", root / "solutions")
    shutil.copytree(MINI / "judge_check", root / "judge_check")
    for d in ("grid", "harbor"):
        (root / "data" / d / "input").mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s["pipelines"][0].update(missing=["kf-99"]), r"pipelines\[0\]\.missing: kf-99 not among"),
        (lambda s: s["pipelines"][1].update(task="harbor-easy-77"), r"pipelines\[1\]\.task: no task"),
        (lambda s: s["pipelines"][2].update(file="broken/nope.py"), r"pipelines\[2\]\.file: .*not found"),
        (lambda s: s["pipelines"][0].pop("missing"), r"pipelines\[0\]: missing field 'missing'"),
        (lambda s: s["pipelines"][0].update(domain="space"), r"pipelines\[0\]\.domain: no domain 'space'"),
    ],
)
def test_labelled_set_errors_name_the_field(tmp_path, mutate, message):
    root = _copy_root(tmp_path)
    path = root / "judge_check" / "labels.json"
    spec = json.loads(path.read_text())
    mutate(spec)
    path.write_text(json.dumps(spec))
    with pytest.raises(JudgeCheckError, match=message):
        load_labelled_set(root)


def test_no_labelled_set(tmp_path):
    root = _copy_root(tmp_path)
    shutil.rmtree(root / "judge_check")
    with pytest.raises(JudgeCheckError, match="no labelled set"):
        load_labelled_set(root)


# ---- scripted judges over the real client -----------------------------------------------------------

_CODE_RE = re.compile(r"<<<CODE\n(.*)\nCODE>>>", re.DOTALL)
_IDS_RE = re.compile(r"one verdict for each of: ([^.\n]+)\.")


def scripted(cases, decide):
    """A server handler: ``decide(case, kf_id, call_no) -> verdict value`` for the case whose code is sent."""
    by_code = {c.code.strip(): c for c in cases}
    calls: dict[str, int] = {}

    def handler(req):
        text = req.last_user_message
        case = by_code[_CODE_RE.search(text).group(1).strip()]
        ids = [i.strip() for i in _IDS_RE.search(text).group(1).split(",")]
        n = calls[case.name] = calls.get(case.name, 0) + 1
        return json.dumps(
            {
                "analysis": "scripted",
                "verdicts": [{"id": i, "implemented": decide(case, i, n), "reason": "scripted"} for i in ids],
            }
        )

    return handler


@pytest.fixture
def judge(openai_server):
    return DesignJudge(get_model(f"openai-compatible/check@{openai_server.base_url}", cache=False))


@pytest.mark.api
def test_perfect_judge_with_yes_no_strings(openai_server, judge):
    cases = load_labelled_set(MINI, domains=["harbor"])
    openai_server.handler = scripted(cases, lambda c, i, n: "Yes" if c.labels[i] else "No")
    r = run_judge_check(judge, cases, k=2, concurrency=3)
    assert len(openai_server.requests) == 2 * len(cases)
    assert r.accuracy == 1.0 and r.kappa == pytest.approx(1.0)
    assert r.flip_rate == 0.0 and r.n_flipped == 0 and r.n_flip_items == r.n_items
    n_missing = sum(1 for c in cases for v in c.labels.values() if not v)
    assert r.confusion.tn == 2 * n_missing and r.confusion.fp == 0 and r.confusion.fn == 0
    assert r.n_verdicts == 2 * r.n_items and r.n_unscored == 0


@pytest.mark.api
def test_always_yes_judge_has_kappa_zero(openai_server, judge):
    """The official harness's behaviour (every verdict yes): accuracy = share of present steps, kappa 0."""
    cases = load_labelled_set(MINI)
    openai_server.handler = scripted(cases, lambda c, i, n: True)
    r = run_judge_check(judge, cases, k=1)
    pos = sum(1 for c in cases for v in c.labels.values() if v)
    assert r.accuracy == pytest.approx(pos / r.n_items)
    assert r.kappa == pytest.approx(0.0)
    assert r.confusion.fp == r.n_items - pos


@pytest.mark.api
def test_flips_and_kappa_on_scripted_verdicts(openai_server, judge):
    cases = load_labelled_set(MINI, domains=["grid"])
    flip_case = next(c for c in cases if c.kind == "reference")
    broken = next(c for c in cases if c.kind == "broken")
    unsure = next(i for i, v in broken.labels.items() if v)  # a present step the judge cannot decide

    def decide(c, i, n):
        if c.name == flip_case.name and i == "kf-1":
            return n != 2  # run 2 says no: a flip
        if c.name == broken.name and not c.labels[i]:
            return "yes"  # the judge misses the broken step every time
        if c.name == broken.name and i == unsure:
            return "perhaps"  # not a verdict: unscored
        return c.labels[i]

    openai_server.handler = scripted(cases, decide)
    r = run_judge_check(judge, cases, k=3, concurrency=2)
    # expected counts by hand
    pos = sum(1 for c in cases for v in c.labels.values() if v)
    neg = r.n_items - pos
    n_missing_broken = sum(1 for v in broken.labels.values() if not v)
    unscored_per_run = 1
    assert r.n_unscored == 3 * unscored_per_run
    assert r.n_flipped == 1
    assert r.flip_rate == pytest.approx(1 / (r.n_items - unscored_per_run))
    tp = 3 * pos - 1 - 3 * unscored_per_run
    fn = 1
    fp = 3 * n_missing_broken
    tn = 3 * neg - fp
    assert r.confusion.model_dump() == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    n = tp + fp + fn + tn
    p_o = (tp + tn) / n
    pa, pb = (tp + fn) / n, (tp + fp) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    assert r.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert r.accuracy == pytest.approx(p_o)
    row = next(c for c in r.cases if c.name == flip_case.name)
    assert row.flipped == ["kf-1"] and sorted(row.verdicts["kf-1"]) == [False, True, True]
    assert next(c for c in r.cases if c.name == broken.name).unscored == 3
