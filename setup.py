"""Build hook (everything else is in pyproject.toml): a wheel carries the checkout's ``workloads/`` (every
bundled suite, and the official workloads' errata) and ``docker/`` (the sandbox image's build context) as
``kramabench/_bundled/``, where :func:`kramabench.data_dir` finds them when kramabench is installed from a
wheel, an sdist or a package index instead of run from a checkout. MANIFEST.in puts both folders into the
sdist, so that a wheel built from the sdist has them too."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: folders of the checkout copied whole into the package (a new bundled suite needs no change here)
BUNDLED = ("workloads", "docker")


class BuildPyWithBundled(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout itself
            return
        target = Path(self.build_lib) / "kramabench" / "_bundled"
        for name in BUNDLED:
            src, dst = HERE / name, target / name
            if not src.is_dir():
                raise FileNotFoundError(f"{src}: missing; the wheel must carry it (is MANIFEST.in intact?)")
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithBundled})
