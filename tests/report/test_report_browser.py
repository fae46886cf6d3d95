"""The HTML report opened in headless Chromium (Debian's ``chromium``): the table renders with its values
and the page is not blank. No network: a file:// page with no external references."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from kramabench.report import write_report

pytestmark = pytest.mark.browser


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")


def _run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def test_report_renders_in_chromium(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    paths = write_report(list(two_runs), tmp_path / "out")
    url = paths.html.resolve().as_uri()

    dom = _run_chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    soup = BeautifulSoup(dom.stdout, "html.parser")
    table = soup.select_one("#domains-end-to-end table.scores")
    assert table is not None, dom.stdout[:500]
    header = [th.get_text(strip=True) for th in table.select("thead th")]
    assert header == ["System", "Model", "archeology", "legal", "Total"]
    rows = {
        tr.select_one("td.row-key").get_text(strip=True): [
            td.select_one(".v").get_text() for td in tr.select("td.score")
        ]
        for tr in table.select("tbody tr")
    }
    assert rows == {"gpt-4o-mini": ["50.0", "75.0", "62.5"], "llama-3-70b": ["75.0", "50.0", "64.3"]}
    # per-task rows rendered, with collapsible code
    tasks = soup.select("#tasks tr.task")
    assert len(tasks) == 14
    assert len(soup.select("#tasks tr.detail > td > details")) == 14

    shot = tmp_path / "report.png"
    res = _run_chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", url)
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    from matplotlib.image import imread

    img = imread(str(shot))[..., :3]
    assert img.shape[0] >= 1500 and img.shape[1] >= 1200
    colours = np.unique((img.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    assert len(colours) > 200  # text, colour-coded cells and plots, not a blank page
    assert img.std() > 0.05
