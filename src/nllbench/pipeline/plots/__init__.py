"""Figures from stored tables: they read results and compute no measure.

Each ``fig_*`` function takes tables (pandas DataFrames written by
:mod:`nllbench.pipeline.aggregate`, or the example files written by ``nllbench example
--out-dir``) and returns a ``matplotlib.figure.Figure``; :func:`save` writes
PNG and PDF with provenance in their metadata.

One module per section of the workflow's report (``workflow/rules/plot.smk``,
``paper.smk``), the shared style apart:

* :mod:`~nllbench.pipeline.plots.paper` (1 Paper): :func:`fig_example`;
* :mod:`~nllbench.pipeline.plots.filters` (2 Filters): :func:`fig_vs_clutter`,
  :func:`fig_decomposition`, :func:`fig_nll_vs_q`, :func:`fig_rank_agreement`,
  :func:`fig_tgospa`, :func:`fig_hota_vs_nll`;
* :mod:`~nllbench.pipeline.plots.scores` (2 Filters): :func:`fig_proper_scores`;
* :mod:`~nllbench.pipeline.plots.trajectory` (2 Filters): :func:`fig_trajectory`;
* :mod:`~nllbench.pipeline.plots.calibration` (3 Calibration):
  :func:`fig_calibration`, :func:`fig_reliability`, :func:`fig_nees`,
  :func:`fig_cardinality`;
* :mod:`~nllbench.pipeline.plots.theory` (4 Theory): :func:`fig_theorem1`;
* :mod:`~nllbench.pipeline.plots.timing` (5 Timing): :func:`fig_timing`;
* :mod:`~nllbench.pipeline.plots.style`: the filters' colours and markers
  (:func:`filter_styles`), labels, the drawing helpers, :func:`plural` and :func:`save`;
* :mod:`~nllbench.pipeline.plots.captions`: each figure's caption, written from the
  tables it draws (attached to the figure; :func:`save` writes ``<stem>.caption.txt``).
"""

from nllbench.pipeline.plots.calibration import (
    fig_calibration,
    fig_cardinality,
    fig_nees,
    fig_reliability,
    probe_q,
)
from nllbench.pipeline.plots.filters import (
    fig_decomposition,
    fig_hota_vs_nll,
    fig_nll_vs_q,
    fig_rank_agreement,
    fig_tgospa,
    fig_vs_clutter,
)
from nllbench.pipeline.plots.paper import fig_example
from nllbench.pipeline.plots.scores import fig_proper_scores
from nllbench.pipeline.plots.style import (
    AXIS_LABEL,
    DECOMPOSITION_TERMS,
    FILTER_STYLE,
    MEAN,
    MEASURE_LABEL,
    RESERVED_COLORS,
    RESERVED_MARKERS,
    ROBUST,
    TERM_COLORS,
    TGOSPA_COLORS,
    Style,
    filter_styles,
    plural,
    save,
)
from nllbench.pipeline.plots.theory import fig_theorem1
from nllbench.pipeline.plots.timing import fig_timing
from nllbench.pipeline.plots.trajectory import fig_trajectory

__all__ = [
    "AXIS_LABEL",
    "DECOMPOSITION_TERMS",
    "FILTER_STYLE",
    "MEAN",
    "MEASURE_LABEL",
    "RESERVED_COLORS",
    "RESERVED_MARKERS",
    "ROBUST",
    "TERM_COLORS",
    "TGOSPA_COLORS",
    "Style",
    "fig_calibration",
    "fig_cardinality",
    "fig_decomposition",
    "fig_example",
    "fig_hota_vs_nll",
    "fig_nees",
    "fig_nll_vs_q",
    "fig_proper_scores",
    "fig_rank_agreement",
    "fig_reliability",
    "fig_tgospa",
    "fig_theorem1",
    "fig_timing",
    "fig_trajectory",
    "fig_vs_clutter",
    "filter_styles",
    "plural",
    "probe_q",
    "save",
]
