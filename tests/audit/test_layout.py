"""Where a reference solution looks for the lake: the layout read from the paths it names, at any depth."""

from __future__ import annotations

import pytest

from kramabench.audit.layout import (
    LakePaths,
    infer_layout,
    lake_relative,
    layout_for,
    link_targets,
    near_in_lake,
    path_strings,
    prefix_of,
    unmatched,
)

LAKE = LakePaths(["noaa.csv", "usa.gpkg", "STORM-AI/warmup/v2/Sat_Density/swarma-wu016.csv",
                  "STORM-AI/warmup/v2/Sat_Density/swarma-wu017.csv", "TLE/48445.tle",
                  "csv/State MSA Identity Theft data/Alabama.csv"])  # fmt: skip


def test_path_strings_follow_the_joins_scripts_make() -> None:
    code = (
        "import os\nfrom pathlib import Path\n"
        "data_path = '../../input/'\n"
        "a = data_path + 'noaa.csv'\n"
        "b = f'{data_path}/TLE/{sat}.tle'\n"
        "c = os.path.join(data_path, 'usa.gpkg')\n"
        "BASE = Path('../../data/astronomy/input') / 'STORM-AI' / 'warmup/v2/'\n"
        "d = BASE.joinpath('Sat_Density', 'swarma-*.csv')\n"
        "print('Loading data from: ./data/x/input')\n"
        "for f in os.listdir(c):\n    f = os.path.join(c, f)\n"
    )
    got = path_strings(code)
    assert "../../input/noaa.csv" in got
    assert "../../input//TLE/*.tle" in got  # an unknown part is a wildcard
    assert "../../input/usa.gpkg" in got
    assert "../../data/astronomy/input/STORM-AI/warmup/v2/Sat_Density/swarma-*.csv" in got
    assert not any(s.count("usa.gpkg") > 1 for s in got)  # ``f = join(c, f)`` is no join of c with itself


def test_path_strings_of_code_that_does_not_parse_are_its_literals() -> None:
    assert "./input/noaa.csv" in path_strings("x = pd.read_csv('./input/noaa.csv'\nprint(x")


@pytest.mark.parametrize(
    ("path", "prefix"),
    [
        ("./data/wildfire/input/noaa.csv", "./data/wildfire/input"),
        ("../../data/wildfire/input/anything/at/all.csv", "../../data/wildfire/input"),
        ("../../input/noaa.csv", "../../input"),
        ("../../../../lake/STORM-AI/warmup/v2/", "../../../../lake"),
        ("./input//TLE/48445.tle", "./input/"),
        ("noaa.csv", ""),
        ("/Users/someone/Kramabench/noaa.csv", "/Users/someone/Kramabench"),
        ("Loading data from: ./data/wildfire/input", None),  # prose around a path is no layout
        ("../../elsewhere/other.csv", None),
        ("*/noaa.csv", None),  # a computed folder
        ("/noaa.csv", None),  # a piece joined to a folder
    ],
)
def test_prefix_of_a_path(path: str, prefix: str | None) -> None:
    got = prefix_of(path, LAKE, "wildfire")
    assert (got.rstrip("/") if got is not None else None) == (
        prefix.rstrip("/") if prefix is not None else None
    )


@pytest.mark.parametrize(
    ("code", "prefix", "lake_at", "cwd"),
    [
        ("pd.read_csv('./data/wildfire/input/noaa.csv')", "./data/wildfire/input", "data/wildfire/input", "."),
        ("pd.read_csv('data/wildfire/input/noaa.csv')", "data/wildfire/input", "data/wildfire/input", "."),
        ("p = '../../data/wildfire/input/'\npd.read_csv(p + 'noaa.csv')", "../../data/wildfire/input",
         "data/wildfire/input", "solutions/wildfire"),
        ("p = '../../input/'\npd.read_csv(p + 'noaa.csv')", "../../input", "input", "solutions/wildfire"),
        ("pd.read_csv('../../../../lake/noaa.csv')", "../../../../lake", "lake", "solutions/wildfire/d3/d4"),
        ("pd.read_csv('./input/noaa.csv')", "./input", "input", "."),
        ("pd.read_csv('noaa.csv')", "", "data/wildfire/input", "data/wildfire/input"),  # inside the lake
        ("print(1)", "./data/wildfire/input", "data/wildfire/input", "."),  # nothing named: the official layout
    ],
)  # fmt: skip
def test_layout_of_a_solution(code: str, prefix: str, lake_at: str, cwd: str) -> None:
    layout, _absolute = infer_layout(code, LAKE, "wildfire")
    assert (layout.prefix, layout.lake_at, layout.cwd) == (prefix, lake_at, cwd)
    assert layout.standard == (lake_at == "data/wildfire/input" and cwd == ".")
    # from the folder it runs in, its prefix reaches the lake
    import posixpath

    if prefix:
        assert posixpath.normpath(posixpath.join(cwd, prefix)) == lake_at


def test_a_solution_using_two_layouts_gets_a_link_for_the_second() -> None:
    code = ("a = pd.read_csv('../../data/wildfire/input/noaa.csv')\nb = pd.read_csv('../../data/wildfire/input/usa.gpkg')\n"
            "c = pd.read_csv('./input/noaa.csv')\n")  # fmt: skip
    layout, _ = infer_layout(code, LAKE, "wildfire")
    assert layout.prefix == "../../data/wildfire/input" and layout.also == ["./input"]
    assert link_targets(layout) == ["solutions/wildfire/input"]
    assert not layout.standard


def test_absolute_paths_are_reported_not_served() -> None:
    layout, absolute = infer_layout("pd.read_csv('/Users/me/Kramabench/noaa.csv')", LAKE, "wildfire")
    assert layout.standard and absolute == ["/Users/me/Kramabench"]
    assert layout_for(["/Users/me"], "wildfire") is None
    assert layout_for(["../.."], "wildfire") is None  # the lake would be above the working folder


def test_unmatched_names_the_patterns_and_folders_with_no_file() -> None:
    code = ("import glob\nfiles = glob.glob('./data/wildfire/input/swarmb/SB_*_2024_*.txt')\n"
            "x = pd.read_csv('./data/wildfire/input/STORM-AI/warmup/v2/Sat_Density/swarma-*.csv')\n"
            "y = pd.read_csv('./data/wildfire/input/ZHVI.csv')\n")  # fmt: skip
    layout, _ = infer_layout(code, LAKE, "wildfire")
    assert unmatched(path_strings(code), layout, LAKE) == ["swarmb/SB_*_2024_*.txt", "ZHVI.csv"]


def test_lake_relative_and_near_names() -> None:
    assert lake_relative("./data/x/input//a/b.csv", "./data/x/input") == "a/b.csv"
    assert lake_relative("../../input/a.csv", "./data/x/input") is None
    assert (
        near_in_lake("csv/State MSA Identity Theft Data", LAKE.files) == "csv/State MSA Identity Theft data"
    )
    assert near_in_lake("noaa.CSV", LAKE.files) == "noaa.csv"
    lake = LakePaths(["mmc1.xlsx", "mmc7.xlsx"])
    assert near_in_lake("mmc2.xlsx", lake.files) is None  # a numbered sibling is another file, not a typo
