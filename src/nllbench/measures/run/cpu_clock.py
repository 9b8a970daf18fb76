"""The CPU seconds of a run's parts: its process's CPU time cut into consecutive laps, each charged to a name.

:class:`CPUClock` reads ``time.process_time`` (the CPU time of the whole
process, every thread, user and system) once per lap: ``charge(name)`` adds
the CPU seconds since the previous lap to ``name``, ``lap()`` leaves them
uncharged. The laps follow one another, so the charged seconds never overlap
and add up to the CPU time between the clock's start and its last lap, less
the laps left out. A lap costs one clock read (a few microseconds on a busy
machine; ``docs/score.md``, ``--timing``).

The names are the measures' (:data:`nllbench.measures.selection.MEASURE_NAMES`) and the parts of a run
that are no measure: :data:`DENSITIES` and :data:`ESTIMATES`.
"""

from __future__ import annotations

import time

#: The part that builds each step's density (reading the tracks for it, the calibration probes, the
#: marginal the NLL is evaluated on, a covariance scale) and reports progress.
DENSITIES = "densities"
#: The part that finds each step's point estimates and gives them run-wide identities (shared by GOSPA,
#: OSPA, the counts, Theorem 1, CLEAR MOT, identity, T-GOSPA and HOTA).
ESTIMATES = "estimates"


class CPUClock:
    """CPU seconds (``time.process_time``) charged to names, lap by lap; started when made.

    A mutable accumulator (one per run, owned by the code that makes it): ``seconds`` maps each name
    charged so far to its CPU seconds (a name never charged is absent, not 0).
    """

    __slots__ = ("_mark", "seconds")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._mark = time.process_time()

    def charge(self, name: str) -> None:
        """Add the CPU seconds since the previous lap (or the start) to ``name``; start the next lap."""
        now = time.process_time()
        self.seconds[name] = self.seconds.get(name, 0.0) + (now - self._mark)
        self._mark = now

    def lap(self) -> None:
        """Start the next lap, leaving the CPU seconds since the previous one to no name."""
        self._mark = time.process_time()
