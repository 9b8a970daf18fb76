"""Which measures a scoring run computes: a selection by the names of the measure declarations.

The names are those of :data:`nllbench.measures.declarations.MEASURES`
(``nll``, ``gospa``, ``hota``, ``energy_score``, ...). A metrics file always
holds the measures declared ``required`` (its readers and tables rely on
them), so a selection can leave out only:

* the optional measures (``required=False``: the proper scores, P-GOSPA,
  PT-GOSPA, the trajectory NLL), each of which is then not computed at all;
* on MOTChallenge files matched by IoU, everything but TrackEval's three
  (``hota``, ``clear_mot``, ``identity``, computed on the boxes): leaving out
  ``nll`` then leaves out every measure of the NLL's run, and the output is
  TrackEval's measures only (as when the NLL lacks a fill-in).

This module reads the declarations only (no numerical library).
"""

from __future__ import annotations

from collections.abc import Iterable

from nllbench.measures.declarations import MEASURES

#: Every measure name a selection may give, in the declarations' order.
MEASURE_NAMES: tuple[str, ...] = tuple(m.name for m in MEASURES)
#: The measures every metrics file holds (a selection with the NLL must keep them).
REQUIRED: frozenset[str] = frozenset(m.name for m in MEASURES if m.required)
#: The measures that a selection may leave out, each then not computed.
OPTIONAL: frozenset[str] = frozenset(MEASURE_NAMES) - REQUIRED
#: TrackEval's measures, computed on the boxes of MOTChallenge files (IoU), with or without the NLL.
BOX_MEASURES: frozenset[str] = frozenset({"hota", "clear_mot", "identity"})


def parse_measures(text: str | Iterable[str], option: str = "measures") -> frozenset[str]:
    """A selection of measure names: comma-separated text or an iterable of names.

    Refuses an empty selection and an unknown name, naming ``option`` and listing the known names.
    """
    names = text.split(",") if isinstance(text, str) else list(text)
    names = [str(n).strip() for n in names]
    if not any(names):
        raise ValueError(f"{option}: expected measure names, got none (known: {', '.join(MEASURE_NAMES)})")
    unknown = [n for n in names if n not in MEASURE_NAMES]
    if unknown:
        raise ValueError(f"{option}: unknown measure {unknown[0]!r}; known: {', '.join(MEASURE_NAMES)}")
    return frozenset(names)


def left_out(
    selected: frozenset[str] | None, boxes: bool = False, option: str = "measures"
) -> frozenset[str]:
    """The measures a run leaves out (does not compute) under ``selected`` (None: the default set).

    ``boxes``: the run is a MOTChallenge pair matched by IoU. A selection
    without ``nll`` is allowed there only (then it must name only
    :data:`BOX_MEASURES`); with ``nll`` it must keep every required measure.
    Refusals name ``option`` and the measures concerned.
    """
    if selected is None:
        return frozenset()
    if "nll" not in selected:
        if not boxes:
            raise ValueError(
                f"{option}: a metrics file always holds the NLL and the other required measures "
                f"({', '.join(n for n in MEASURE_NAMES if n in REQUIRED)}); only MOTChallenge files matched "
                f"by IoU can be scored without it (TrackEval's {', '.join(sorted(BOX_MEASURES))})"
            )
        extra = sorted(selected - BOX_MEASURES)
        if extra:
            raise ValueError(
                f"{option}: {', '.join(extra)} need the NLL's run: add nll, or select only "
                f"{', '.join(sorted(BOX_MEASURES))} (TrackEval's measures on the boxes)"
            )
        return frozenset(MEASURE_NAMES) - selected
    missing = [n for n in MEASURE_NAMES if n in REQUIRED and n not in selected]
    if missing:
        raise ValueError(
            f"{option}: with nll a metrics file always holds {', '.join(missing)} (required measures); "
            f"the measures that can be left out are {', '.join(n for n in MEASURE_NAMES if n in OPTIONAL)}"
        )
    return frozenset(MEASURE_NAMES) - selected
