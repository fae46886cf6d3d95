"""The report's plots (kramabench.report.plots)."""

from __future__ import annotations

from kramabench.report.plots import domain_bars
from kramabench.report.tables import Row, Table
from kramabench.scorers.stats import MeanCI


def test_a_mean_without_an_interval_is_drawn_without_whiskers() -> None:
    # a setting's metric given without its parts (RatioMetric.parts is optional) has a value and no
    # interval: its bar is drawn, with no whisker (the plot raised TypeError on it)
    table = Table(
        key="metrics-x",
        title="x: metrics",
        columns=["SRDEL", "SRDT"],
        rows=[
            Row(label="run a", cells=[MeanCI(0.5, None, None, 4), MeanCI(0.25, 0.1, 0.4, 4)], run_index=0),
            Row(label="run b", cells=[MeanCI(None, None, None, 0), MeanCI(0.75, None, None, 2)], run_index=1),
        ],
    )
    svg = domain_bars(table)
    assert svg is not None and svg.startswith("<svg")
    assert "run a" in svg and "run b" in svg
