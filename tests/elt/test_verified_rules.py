"""The ``verified`` comparator rule by rule, against ELT-Bench-Verified's own rules (tests/elt/oracle_verified.py,
written from Verified's published document and code) on the same two CSV files: each rule at its edges, and
random tables for the named difference ``key`` (where Verified pairs the same rows, the verdict is Verified's)."""

from __future__ import annotations

import io
import random

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kramabench.elt.compare import Table, TableResult, compare, verified
from tests.elt import oracle_verified as oracle

ALL = frozenset(oracle.DIFFERENCES)


def judged(gt: str, got: str, dropped: dict[str, str] | None = None) -> tuple[TableResult, bool]:
    """(our result, Verified's own verdict) for two CSV texts; ours equals the oracle's with the named differences."""
    ours = compare(Table.from_csv_text(gt), Table.from_csv_text(got), "verified", dropped=dropped)
    g, p = pd.read_csv(io.StringIO(gt)), pd.read_csv(io.StringIO(got))
    assert ours.correct == oracle.judge(g, p, ALL, dropped=set(dropped or ())), ours
    return ours, oracle.judge(g, p, dropped=set(dropped or ()))


def verdict(gt: str, got: str) -> bool:
    """Our verdict where no named difference applies: Verified's own verdict too."""
    ours, own = judged(gt, got)
    assert ours.correct == own, ours
    return ours.correct


def test_quotes_one_pair_either_side_never_in_a_time_column() -> None:
    gt = 'id,kind\n1,"""regular"""\n2,plain\n'
    assert verdict(gt, "id,kind\n1,regular\n2,plain\n")
    # quotes around nothing: an empty text, which is not NULL
    assert not verdict("id,kind\n1,regular\n2,''\n", "id,kind\n1,regular\n2,\n")
    assert verdict("id,kind\n1,regular\n2,plain\n", 'id,kind\n1,"""regular"""\n2,\'plain\'\n')
    assert not verdict(
        "id,kind\n1,regular\n2,plain\n", 'id,kind\n1,"""regular"\n2,plain\n'
    )  # '"regular': kept
    assert not verdict(
        "id,kind\n1,regular\n2,plain\n", 'id,kind\n1,"\'regular"""\n2,plain\n'
    )  # 'regular": kept
    # a time column is read from the raw values: quotes stay, pandas cannot read the day
    assert not verdict("id,day\n1,2024-01-02\n2,2024-01-03\n", 'id,day\n1,"""2024-01-02"""\n2,2024-01-03\n')
    # a boolean column too: '"true"' is no boolean word
    assert not verdict("id,flag\n1,True\n2,False\n", 'id,flag\n1,"""true"""\n2,false\n')


def test_texts_compare_without_regard_to_case_but_not_to_spaces() -> None:
    gt = "id,city\n1,Oslo\n2,Riga\n"
    r = judged(gt, "id,city\n1,OSLO\n2,riga\n")[0]
    assert r.correct and "texts equal without regard to letter case" in r.columns[1].normalised
    assert not verdict(gt, "id,city\n1,Oslo \n2,Riga\n") and not verdict(gt, "id,city\n1, Oslo\n2,Riga\n")
    # the same in a key column: the rows still pair
    assert verdict("city,n\nOslo,1\nRiga,2\n", "city,n\nriga,2\nOSLO,1\n")


def test_booleans_are_six_words_and_at_most_two_values() -> None:
    gt = "id,flag\n1,True\n2,False\n3,True\n"
    assert verdict(gt, "id,flag\n1,yes\n2,no\n3,yes\n") and verdict(gt, "id,flag\n1, YES \n2,No\n3,Yes\n")
    assert verdict(gt, "id,flag\n1,1\n2,0\n3,1\n") and verdict(gt, "id,flag\n1,1.0\n2,0.0\n3,1.0\n")
    assert not verdict(gt, "id,flag\n1,t\n2,f\n3,t\n") and not verdict(gt, "id,flag\n1,Y\n2,N\n3,Y\n")
    # NULL against False: 0 against NULL
    assert verdict(gt, "id,flag\n1,True\n2,\n3,True\n")
    # neither side boolean: three distinct words on each side (Verified's code allows two) compare as text
    assert not verdict("id,flag\n1,yes\n2,no\n3,true\n", "id,flag\n1,true\n2,false\n3,yes\n")
    # one boolean side is enough: the other side's words are mapped too
    assert verdict(gt, "id,flag\n1,yes\n2,false\n3,TRUE\n")


def test_timestamps_the_date_only_share_and_the_precision() -> None:
    full = "id,at\n" + "".join(f"{i},2024-01-0{i} 1{i}:00:00\n" for i in range(1, 6))
    # the ground truth 4 of 5 days (80%: not more than 80%, not date-only) against full times: to the second
    assert not verdict(
        "id,at\n" + "".join(f"{i},2024-01-0{i}\n" for i in range(1, 5)) + "5,2024-01-05 15:00:00\n", full
    )
    # 5 of 6 (83%): date-only, both to the day
    full6 = full + "6,2024-01-06 16:00:00\n"
    assert verdict(
        "id,at\n" + "".join(f"{i},2024-01-0{i}\n" for i in range(1, 6)) + "6,2024-01-06 16:00:00\n", full6
    )
    # both full: to the second (milliseconds go, a second does not); T for the space; an offset never equals
    assert verdict(full, full.replace(":00:00", ":00:00.250"))
    assert not verdict(full, full.replace("11:00:00", "11:00:01"))
    assert verdict(full, full.replace(" 1", "T1"))
    assert not verdict(full, full.replace(":00:00\n", ":00:00+00:00\n"))
    # both date-only: no flooring to the day, a midnight timestamp is the day
    days = "id,d\n1,2024-01-01\n2,2024-01-02\n"
    assert verdict(days, "id,d\n1,2024-01-01 00:00:00\n2,2024-01-02 00:00:00\n")
    assert verdict(days, "id,d\n1, 2024-01-01\n2,2024-01-02\n")  # stripped for the share; pandas reads it


def test_the_percentage_scale_needs_three_pairs_and_counts_a_produced_zero() -> None:
    gt3 = "id,pct\n1,50.0\n2,30.0\n3,20.0\n"
    assert verdict(gt3, "id,pct\n1,0.5\n2,0.3\n3,0.2\n") and verdict("id,pct\n1,0.5\n2,0.3\n3,0.2\n", gt3)
    assert not verdict(
        "id,pct\n1,50.0\n2,50.0\n3,0.0\n", "id,pct\n1,0.5\n2,0.5\n3,0.0\n"
    )  # 2 pairs: a 0 is none
    # the ground truth's non-zero values make the pairs: a produced 0 is one (ratio 0, the median still 100)
    assert verdict("id,pct\n1,0.5\n2,0.5\n3,0.00000005\n", "id,pct\n1,50.0\n2,50.0\n3,0.0\n")
    # a median outside [95, 105]: no rescale
    assert not verdict(gt3, "id,pct\n1,0.45\n2,0.27\n3,0.18\n")
    r = judged(gt3, "id,pct\n1,0.5\n2,0.3\n3,0.2\n")[0]
    assert any("multiplied by 100" in n for n in r.columns[1].normalised)


def test_numbers_one_percent_and_the_zero_cases() -> None:
    def num(a: str, b: str) -> bool:
        return verdict(f"id,x\n1,{a}\n2,1.0\n", f"id,x\n1,{b}\n2,1.0\n")

    assert num("100", "101") and num("-100", "-100.99") and not num("100", "101.2") and not num("-3.5", "3.5")
    assert num("0", "0.0000001") and not num("0", "0.0000002")  # one side 0: only 1e-7, not 1e-6
    assert num("0.0000001", "0.0000009")  # both non-zero: under 1e-6
    assert verified.values_match(12.5, " 12.50 ") and verified.values_match("0451", 451)


def test_null_and_zero() -> None:
    gt = "id,n,t\n1,0,a\n2,,b\n3,2,\n"
    assert verdict(gt, "id,n,t\n1,,a\n2,0,b\n3,2,\n")  # NULL for 0 and 0 for NULL
    assert verdict(gt, "id,n,t\n1,0.0,a\n2,0.0,b\n3,2.0,\n")
    assert not verdict(gt, "id,n,t\n1,0,a\n2,,b\n3,,\n")  # NULL for 2
    assert not verdict(gt, "id,n,t\n1,0,a\n2,,b\n3,2,0\n")  # the text '0' for NULL
    assert (
        verified.values_match(None, 0)
        and verified.values_match(False, None)
        and not verified.values_match(None, "0")
    )


def test_a_model_needs_one_matched_column() -> None:
    ours, own = judged("id\n1\n2\n", "id\n1\n2\n", dropped={"id": "wrong ground truth"})
    assert not ours.correct and not own and ours.columns[0].status == "dropped"


def test_names_without_regard_to_case_is_a_named_difference() -> None:
    ours, own = judged("id,v\n1,a\n", "ID,V\n1,a\n")
    assert ours.correct and not own
    assert any("without regard to case" in n for n in ours.columns[0].normalised)


def test_rows_are_counted_a_named_difference() -> None:
    gt = "id,v\n1,a\n2,b\n3,c\n"
    for got in ("id,v\n1,a\n3,c\n", "id,v\n1,a\n2,b\n3,c\n4,d\n", "id,v\n1,a\n2,b\n2,b\n3,c\n"):
        ours, own = judged(gt, got)
        assert not ours.correct and own and ours.missing_rows + ours.extra_rows == 1


def test_a_measure_is_never_the_key() -> None:
    """Verified keys rows on the first 80%-distinct column when nothing is named as an id: a measure. Two
    totals within 1% that cross: Verified pairs the wrong rows, kramabench keys on the name."""
    gt = "amount,city\n100.0,Oslo\n100.5,Riga\n"
    ours, own = judged(gt, "amount,city\n100.6,Oslo\n100.2,Riga\n")
    assert ours.correct and ours.key == ["city"] and not own
    # a 5% error in one row: Verified drops the row (its key differs), kramabench compares it
    ours, own = judged(
        "amount,city\n100.0,Oslo\n200.0,Riga\n300.0,Bergen\n",
        "amount,city\n100.0,Oslo\n210.0,Riga\n300.0,Bergen\n",
    )
    assert not ours.correct and own and ours.unmatched_columns == ["amount"]


# -- random tables: the key difference changes no verdict where Verified pairs the same rows -----------------

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Flo"]


@st.composite
def table_pairs(draw: st.DrawFn) -> tuple[str, str]:
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, 7))
    id_name = draw(st.sampled_from(["visit_id", "vid", "code", "unique_row_id", "number"]))
    text_name = draw(st.sampled_from(["name", "city", "label"]))
    ids = rnd.sample(range(1, 50), n) if draw(st.booleans()) else [rnd.randint(1, 3) for _ in range(n)]
    names = [rnd.choice(NAMES) if draw(st.booleans()) else NAMES[i % len(NAMES)] for i in range(n)]
    rows = [
        {
            id_name: ids[i],
            text_name: names[i],
            "day": f"2024-02-{rnd.randint(1, 9):02d}",
            "amount": round(rnd.uniform(-50, 300), 2) if rnd.random() > 0.15 else None,
            "flag": rnd.random() > 0.5,
        }
        for i in range(n)
    ]
    gt = pd.DataFrame(rows)
    got = [dict(r) for r in rows]
    rnd.shuffle(got)
    for _ in range(draw(st.integers(0, 3))):
        r = rnd.choice(got)
        fault = draw(
            st.sampled_from(
                [
                    "near",
                    "far",
                    "case",
                    "quote",
                    "null0",
                    "time",
                    "ms",
                    "badday",
                    "drop",
                    "dup",
                    "id",
                    "space",
                ]
            )
        )
        if fault == "near" and r["amount"] is not None:
            r["amount"] = r["amount"] * rnd.choice([1.004, 0.996])
        elif fault == "far" and r["amount"] is not None:
            r["amount"] = r["amount"] * 1.05
        elif fault == "case":
            r[text_name] = r[text_name].upper()
        elif fault == "quote":
            r[text_name] = f'"{r[text_name]}"'
        elif fault == "null0":
            r["amount"] = 0.0 if r["amount"] is None else None
        elif fault == "time":
            r["day"] = r["day"] + " 10:30:00"
        elif fault == "ms":
            r["day"] = r["day"] + "T00:00:00.250"
        elif fault == "badday":
            r["day"] = "2024-02-30"
        elif fault == "drop" and len(got) > 1:
            got.remove(r)
        elif fault == "dup":
            got.append(dict(r))
        elif fault == "id":
            r[id_name] = r[id_name] + 1
        elif fault == "space":
            r[text_name] = r[text_name] + " "
    return gt.to_csv(index=False), pd.DataFrame(got, columns=list(gt.columns)).to_csv(index=False)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_pairs())
def test_random_tables_agree_with_the_oracle_and_with_verified_where_it_pairs_the_same_rows(
    pair: tuple[str, str],
) -> None:
    gt, got = pair
    ours, own = judged(gt, got)
    g, p = pd.read_csv(io.StringIO(gt)), pd.read_csv(io.StringIO(got))
    assert ours.key == oracle.identifying_key(g, p)
    if len(g.drop_duplicates()) != len(g) or len(p.drop_duplicates()) != len(p):
        return  # Verified drops duplicate rows: another set of rows (the difference "rows")
    _, _, vi, vj, v_out = oracle.verified_alignment(g.copy(), p.copy())
    _, _, ki, kj, k_out = oracle.identifying_alignment(g, p)
    if v_out == 0 and k_out == 0 and set(zip(vi, vj, strict=True)) == set(zip(ki, kj, strict=True)):
        assert ours.correct == own, (ours, gt, got)
