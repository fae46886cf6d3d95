"""The validator on official-style domains we do not have here: an astronomy-like lake (about 1,500 files in
nested folders, data_sources given as globs) and a wildfire-like lake (xlsx, csv, shapefile parts)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kramabench.workload import is_failing, load_workload
from kramabench.workload.sources import LakeInventory, Match


def _task(tid: str, ds: list[str], subs: list[list[str]]) -> dict:
    return {
        "id": tid,
        "query": "q",
        "answer": 1.5,
        "answer_type": "numeric_approximate",
        "data_sources": ds,
        "subtasks": [
            {"id": f"{tid}-{k + 1}", "query": "s", "step": "st", "answer": "x", "answer_type": "string_exact",
             "data_sources": d}
            for k, d in enumerate(subs)
        ],
    }  # fmt: skip


@pytest.fixture(scope="module")
def official_style_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("official_style")
    astro = root / "data" / "astronomy" / "input"
    files = [
        f"STORM-AI/warmup/v2/Sat_Density/{sat}-wu{i:03d}-20240101_to_20240105.csv"
        for sat in ("swarma", "swarmb", "champ", "grace")
        for i in range(300)
    ]
    files += [f"STORM-AI/warmup/v2/OMNI2/omni2-wu{i:03d}-20240101_to_20240105.csv" for i in range(200)]
    files += [f"omni2_low_res/omni2_{y}.dat" for y in range(1990, 2025)]
    files += ["geomag_forecast/0309geomag_forecast.txt", "space-track/58214.csv", "TLE/48445.tle"]
    for f in files:
        (astro / f).parent.mkdir(parents=True, exist_ok=True)
        (astro / f).write_text("a,b\n1,2\n")
    fire = root / "data" / "wildfire" / "input"
    for f in ("noaa_wildfires.csv", "Wildfire_Acres_by_State.xlsx", "usa.shp", "usa.shx", "usa.dbf", "usa.prj",
              "nifc_geographic_areas/Areas.shp", "nifc_geographic_areas/Areas.dbf",
              "cleaned_helicopter_requests_by_region.csv"):  # fmt: skip
        (fire / f).parent.mkdir(parents=True, exist_ok=True)
        (fire / f).write_bytes(b"\x00\x01")
    astronomy = [
        _task("astronomy-easy-1", ["STORM-AI/warmup/v2/Sat_Density/swarma-wu*.csv"],
              [["STORM-AI/warmup/v2/OMNI2/*"], ["omni2_low_res/omni2_2000.dat"], ["STORM-AI/**/*.csv"]]),
        _task("astronomy-easy-2", ["Sat_Density/champ-wu*.csv"],
              [["storm-ai/warmup/v2/omni2/omni2-wu001-20240101_to_20240105.csv"], ["*.DAT"]]),
        _task("astronomy-hard-3", ["omni2_low_res/"],
              [["58214.csv"], ["geomag_forcast/0309geomag_forecast.txt"], ["STORM-AI/warmup/v3/OMNI2/*.csv"]]),
        _task("astronomy-hard-4", ["space-track/99999.csv"],
              [["./"], ["data/astronomy/input/TLE/48445.tle"]]),
    ]  # fmt: skip
    wildfire = [
        _task("wildfire-easy-1", ["noaa_wildfires.csv", "Wildfire_Acres_by_State.xlsx"],
              [["usa.shp"], ["nifc_geographic_areas/"], ["usa.*"]]),
        _task("wildfire-hard-2", ["nifc_geographic_areas/*.shp", "Areas.shp"],
              [["wildfire_acres_by_state.xlsx"], ["helicopter_requests.csv"], ["*.SHP"]]),
    ]  # fmt: skip
    (root / "workload").mkdir()
    (root / "workload" / "astronomy.json").write_text(json.dumps(astronomy))
    (root / "workload" / "wildfire.json").write_text(json.dumps(wildfire))
    return root


def _by_id(wl) -> dict[str, list[tuple[str, str, str | None]]]:
    out: dict[str, list[tuple[str, str, str | None]]] = {}
    for f in wl.findings:
        out.setdefault(f.subtask_id or f.task_id or "", []).append((f.severity, f.code, f.suggestion))
    return out


def test_astronomy_like_lake_globs_and_nested_folders(official_style_root):
    t0 = time.perf_counter()
    wl = load_workload(official_style_root, "astronomy", errata=False)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30, elapsed  # generous: a hang or a quadratic blow-up, not a speed target
    f = _by_id(wl)
    # globs that match as written, a folder, "./", "**": no finding at all
    for clean in ("astronomy-easy-1", "astronomy-easy-1-1", "astronomy-easy-1-2", "astronomy-easy-1-3",
                  "astronomy-hard-3", "astronomy-hard-4-1"):  # fmt: skip
        assert clean not in f, (clean, f.get(clean))
    # a glob written from a deeper folder: info, with the full pattern
    assert f["astronomy-easy-2"] == [
        ("info", "data_source_nested", "write 'STORM-AI/warmup/v2/Sat_Density/champ-wu*.csv'")
    ]
    # folders in the wrong letter case: an error naming the real path, not "written with leading folders"
    assert f["astronomy-easy-2-1"] == [
        ("error", "data_source_case", "write 'STORM-AI/warmup/v2/OMNI2/omni2-wu001-20240101_to_20240105.csv'")
    ]
    # a glob whose letters differ in case: the suggestion is the pattern respelt, not a list of files
    assert f["astronomy-easy-2-2"] == [("error", "data_source_case", "write 'omni2_low_res/*.dat'")]
    assert f["astronomy-hard-3-1"] == [("info", "data_source_nested", "write 'space-track/58214.csv'")]
    # a misspelt or wrong folder on the way is a typo error with the right path
    assert f["astronomy-hard-3-2"] == [
        ("error", "data_source_typo", "write 'geomag_forecast/0309geomag_forecast.txt'")
    ]
    assert f["astronomy-hard-3-3"] == [
        ("error", "data_source_typo", "write 'STORM-AI/warmup/v2/OMNI2/*.csv'")
    ]
    # absent file of a numbered series: missing, no fake "closest" sibling
    assert [(s, c) for s, c, _ in f["astronomy-hard-4"]] == [("error", "data_source_missing")]
    # written from the workload root: a warning with the lake-relative path
    assert f["astronomy-hard-4-2"] == [("warning", "data_source_prefixed", "write 'TLE/48445.tle'")]
    assert sum(is_failing(x) for x in wl.findings) == 5


def test_wildfire_like_lake_shapefiles_and_xlsx(official_style_root):
    wl = load_workload(official_style_root, "wildfire", errata=False)
    f = _by_id(wl)
    assert "wildfire-easy-1" not in f and not any(k.startswith("wildfire-easy-1-") for k in f)
    assert f["wildfire-hard-2"] == [("info", "data_source_nested", "write 'nifc_geographic_areas/Areas.shp'")]
    assert f["wildfire-hard-2-1"] == [("error", "data_source_case", "write 'Wildfire_Acres_by_State.xlsx'")]
    assert f["wildfire-hard-2-2"] == [
        ("error", "data_source_not_found", "write 'cleaned_helicopter_requests_by_region.csv'")
    ]
    assert f["wildfire-hard-2-3"] == [("error", "data_source_case", "write '*.shp'")]


def test_glob_counts_on_a_large_lake(official_style_root):
    inv = LakeInventory(official_style_root / "data" / "astronomy" / "input")
    assert len(inv.files) == 1200 + 200 + 35 + 3
    r = inv.resolve("STORM-AI/warmup/v2/Sat_Density/*.csv")
    assert (r.match, r.n_files) == (Match.EXACT, 1200)
    r = inv.resolve("sat_density/*.CSV")
    assert (r.match, r.paths, r.n_files) == (Match.CASE, ["STORM-AI/warmup/v2/Sat_Density/*.csv"], 1200)
    r = inv.resolve("STORM-AI/warmup/v2/Sat_Density/swarmc-wu*.csv")
    assert r.match is Match.MISSING
