"""Progress of a run: a rich live bar on a terminal, plain periodic lines on stderr otherwise."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from kramabench.contracts.cost import format_cost, unpriced_calls
from kramabench.contracts.records import Record
from kramabench.contracts.text import safe_text

if TYPE_CHECKING:  # rich is imported when a bar starts
    from rich.console import Console
    from rich.progress import Progress as RichBar
    from rich.progress import TaskID


@dataclass
class Stats:
    total: int = 0
    done: int = 0
    failed: int = 0
    score_sum: float = 0.0
    scored: int = 0
    cost: float = 0.0
    cost_unknown: int = 0
    #: model calls without a known price so far
    unpriced: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, r: Record) -> None:
        self.done += 1
        if r.status == "error":
            self.failed += 1
        if r.score is not None and not r.unscored:
            self.score_sum += r.score
            self.scored += 1
        if r.usage.cost_usd is None:
            self.cost_unknown += 1
        else:
            self.cost += r.usage.cost_usd
        self.unpriced += unpriced_calls(r.usage)

    def cost_text(self, *, narrow: bool = False) -> str:
        """``$0.0123``, or ``cost unknown (3?)`` once a call had no known price (never a partial sum);
        ``narrow`` (an 80-column bar): ``cost ?``."""
        if not self.unpriced:
            return f"${self.cost:.4f}"
        return "cost ?" if narrow else "cost " + format_cost(self.cost, self.unpriced, short=True)

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def eta_s(self) -> float | None:
        if not self.done:
            return None
        rate = self.done / max(1e-9, time.monotonic() - self.started)
        return (self.total - self.done) / rate if rate > 0 else None

    def line(self) -> str:
        mean = f"{100 * self.mean:.1f}%" if self.mean is not None else "-"
        cost = self.cost_text()
        eta = self.eta_s()
        eta_s = _fmt_s(eta) if eta is not None else "?"
        return f"{self.done}/{self.total} done · {self.failed} failed · score {mean} · {cost} · ETA {eta_s}"


def _fmt_s(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s" if m else f"{sec}s"


class Progress:
    """No output (the base class); subclasses draw."""

    def __init__(self) -> None:
        self.stats = Stats()

    def start(self, total: int, label: str = "") -> None:
        self.stats = Stats(total=total)

    def update(self, record: Record) -> None:
        self.stats.add(record)

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        pass


class PlainProgress(Progress):
    """One line every ``interval_s`` seconds (and at the end) on ``stream``: for logs and CI."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = 10.0) -> None:
        super().__init__()
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self._last = 0.0
        self.label = ""

    def start(self, total: int, label: str = "") -> None:
        super().start(total, label)
        self.label = label
        self._last = time.monotonic()
        print(f"[kramabench] {safe_text(label)}: {total} task(s) to run", file=self.stream, flush=True)

    def update(self, record: Record) -> None:
        super().update(record)
        now = time.monotonic()
        if now - self._last >= self.interval_s or self.stats.done == self.stats.total:
            self._last = now
            print(f"[kramabench] {self.stats.line()}", file=self.stream, flush=True)

    def note(self, text: str) -> None:
        print(
            f"[kramabench] {safe_text(text)}", file=self.stream, flush=True
        )  # notes name tasks and files: data


class RichProgress(Progress):
    """A live bar: done/failed, running mean score, cost so far, ETA."""

    def __init__(self, console: Console | None = None) -> None:
        super().__init__()
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self._progress: RichBar | None = None
        self._task: TaskID | None = None
        self._narrow = False

    def start(self, total: int, label: str = "") -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RP
        from rich.text import Text

        super().start(total, label)
        label = safe_text(label or "run")
        # an 80-column terminal must still show done/total, failures, score, cost and ETA: there the bar is
        # short and the elapsed time is left out; a label too long for the line is printed whole above the
        # bar (never cut: it holds the run id to resume) and the bar says "tasks"
        narrow = self._narrow = self.console.width < 130
        room = max(8, self.console.width - 78) if narrow else 60
        if len(label) > room:
            self.console.print(Text(label, style="bold"), soft_wrap=True, highlight=False)
            label = "tasks"
        columns = [
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(bar_width=8 if narrow else 40),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
        ]
        if not narrow:
            columns.append(TimeElapsedColumn())
        columns += [TextColumn("ETA"), TimeRemainingColumn()]
        self._progress = RP(*columns, console=self.console, transient=False)
        self._progress.start()
        self._task = self._progress.add_task(label, total=total, info="")

    def update(self, record: Record) -> None:
        super().update(record)
        s = self.stats
        mean = f"{100 * s.mean:.1f}%" if s.mean is not None else "-"
        cost = s.cost_text(narrow=self._narrow)
        fail = f"[red]{s.failed} failed[/red]" if s.failed else "0 failed"
        if self._progress is not None and self._task is not None:  # set together by start
            self._progress.update(self._task, completed=s.done, info=f"{fail} · score {mean} · {cost}")

    def note(self, text: str) -> None:
        from rich.text import Text

        self.console.print(
            Text(safe_text(text), style="yellow")
        )  # notes name tasks and files: data, not markup

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def make_progress(kind: str = "auto") -> Progress:
    """``auto``: rich on a terminal, plain lines otherwise; ``plain``; ``rich``; ``none``."""
    if kind not in ("auto", "rich", "plain", "none"):
        raise ValueError(f"unknown progress display {kind!r}: choose auto, rich, plain or none")
    if kind == "none":
        return Progress()
    if kind == "rich" or (kind == "auto" and sys.stderr.isatty()):
        return RichProgress()
    return PlainProgress()


__all__ = ["PlainProgress", "Progress", "RichProgress", "Stats", "make_progress"]
