"""A progress line on standard error for long runs (``nllbench score`` on a table of millions of rows)."""

from __future__ import annotations

import sys


class ProgressLine:
    """``progress(done, total, seconds)`` callback printing ``LABEL: done/total frames (p %), rate, left``.

    A line at most every ``every`` seconds of wall time (the first after
    ``every`` seconds: a short run prints none), and a last one when every
    frame is done if any was printed before. ``every`` 0 prints none.
    """

    def __init__(self, label: str, every: float, stream=None):
        self.label = label
        self.every = float(every)
        self.stream = stream
        self.printed = False
        self.next = self.every

    def __call__(self, done: int, total: int, seconds: float) -> None:
        if self.every <= 0:
            return
        last = done == total
        if seconds < self.next and not (last and self.printed):
            return
        self.next = seconds + self.every
        self.printed = True
        rate = done / seconds if seconds > 0 else float("inf")
        left = (total - done) / rate if rate > 0 else float("inf")
        share = 100.0 * done / total if total else 100.0
        when = (
            f"{_duration(seconds)} in all"
            if last
            else f"{_duration(seconds)} so far, about {_duration(left)} left"
        )
        print(
            f"{self.label}: {done}/{total} frames ({share:.1f} %), {rate:.0f} frames/s, {when}",
            file=self.stream if self.stream is not None else sys.stderr,
            flush=True,
        )


def _duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
