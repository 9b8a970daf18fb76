"""How the workflow's figures enter the Snakemake report: their section, their place in it, their caption.

The report sorts the items of a section by their labels, as text; each label
starts with the item's number, so the items follow the order in which the
report's landing page (``workflow/report/workflow.rst``) describes them,
not the alphabet. Keep numbers below 10 within a section (text order).

A figure's caption is written by ``nllbench plot`` from the numbers of the run
(:mod:`nllbench.pipeline.plots.captions`) beside the figure; the report reads
it through :class:`CaptionFile`, a job parameter of the plot rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReportItem:
    """A figure's report section (``category``) and label (number, then what it shows)."""

    figure: str
    category: str
    label: str


#: The sweep's figures in report order (``nllbench plot`` names; ``timing`` has its own rule).
SWEEP_ITEMS = (
    ReportItem("clutter", "2 Filters", "1 NLL and GOSPA against clutter"),
    ReportItem("decomposition", "2 Filters", "2 NLL decomposition"),
    ReportItem("q", "2 Filters", "3 NLL against Q"),
    ReportItem("ranks", "2 Filters", "4 rank agreement"),
    ReportItem("tgospa", "2 Filters", "5 trajectory-GOSPA decomposition"),
    ReportItem("hota", "2 Filters", "6 HOTA against NLL"),
    ReportItem("trajectory", "2 Filters", "7 trajectory NLL beside NLL, IDF1 and HOTA"),
    ReportItem("proper_scores", "2 Filters", "8 proper scores beside NLL and GOSPA"),
    ReportItem("calibration", "3 Calibration", "1 covariance-scale probe"),
    ReportItem("reliability", "3 Calibration", "2 reliability diagrams"),
    ReportItem("nees", "3 Calibration", "3 NEES consistency"),
    ReportItem("cardinality", "3 Calibration", "4 cardinality calibration"),
    ReportItem("theorem1", "4 Theory", "1 Theorem 1 at every evaluated step"),
)
#: The timing figure's item (the only one of its section).
TIMING_ITEM = ReportItem("timing", "5 Timing", "1 measured evaluation time")

#: The propriety audit's items (``docs/audit.md``), in report order: its figure, its verdict table (an
#: HTML page) and, where the audit runs reference filters (part 2), their figure. Drawn only when the
#: configuration has an ``audit`` section (:func:`audit_items`).
AUDIT_ITEMS = (
    ReportItem("audit", "6 Honest uncertainty", "1 propriety audit"),
    ReportItem("verdicts", "6 Honest uncertainty", "2 verdict table"),
    ReportItem("filters", "6 Honest uncertainty", "3 reference filters' preferred probes"),
)

#: The identity study's items (``docs/trajectory_filters.md``), in report order: its figure (each filter's
#: trajectory NLL, T-GOSPA and IDF1 on runs with and without a coalescence) and its table (an HTML page).
#: Drawn only when the configuration has an ``identity`` section (:func:`identity_items`).
IDENTITY_ITEMS = (
    ReportItem("identity", "7 Identity uncertainty", "1 trajectory NLL with and without a coalescence"),
    ReportItem("identity_table", "7 Identity uncertainty", "2 table of medians and extra costs"),
)

SWEEP_FIGURES = [item.figure for item in SWEEP_ITEMS]
#: Figures drawn only when the evaluation computes what they show (evaluation config key).
NEEDS = {"proper_scores": "proper_scores"}


def sweep_figures(evaluation: dict) -> list[str]:
    """The sweep figures a study draws: :data:`SWEEP_FIGURES` without those whose evaluation setting
    (:data:`NEEDS`) the ``evaluation`` config turns off (a setting absent from it is on)."""
    return [f for f in SWEEP_FIGURES if evaluation.get(NEEDS.get(f, ""), True)]


def audit_items(config: dict) -> list[ReportItem]:
    """The audit's report items of a configuration: none without an ``audit`` section (absent or null),
    the figure and the verdict table with one, and the reference filters' figure where it has ``filters``."""
    section = config.get("audit")
    if section is None:
        return []
    return [item for item in AUDIT_ITEMS if item.figure != "filters" or (section or {}).get("filters")]


def identity_items(config: dict) -> list[ReportItem]:
    """The identity study's report items of a configuration: none without an ``identity`` section."""
    return [] if config.get("identity") is None else list(IDENTITY_ITEMS)


_IDENTITY = {item.figure: item for item in IDENTITY_ITEMS}


def identity_category(name: str) -> str:
    """The report section of the identity study's item ``name`` (``identity`` or ``identity_table``)."""
    return _IDENTITY[name].category


def identity_labels(name: str) -> dict[str, str]:
    """The report labels of the identity study's item ``name``."""
    return {"item": _IDENTITY[name].label}


_BY_FIGURE = {item.figure: item for item in (*SWEEP_ITEMS, TIMING_ITEM)}
_AUDIT = {item.figure: item for item in AUDIT_ITEMS}


def audit_category(name: str) -> str:
    """The report section of the audit's item ``name`` (``audit``, ``verdicts`` or ``filters``)."""
    return _AUDIT[name].category


def audit_labels(name: str) -> dict[str, str]:
    """The report labels of the audit's item ``name``."""
    return {"item": _AUDIT[name].label}


def figure_category(figure: str) -> str:
    """The report section of ``figure``."""
    return _BY_FIGURE[figure].category


def figure_labels(figure: str) -> dict[str, str]:
    """The report labels of ``figure`` (one label, ``item``, as the paper's items have)."""
    return {"item": _BY_FIGURE[figure].label}


#: reStructuredText's inline markup characters, escaped in a caption so that they print as typed.
_RST_SPECIAL = "\\*`_|"


class CaptionFile:
    """A figure's caption file as a job parameter: ``str()`` is its path, :attr:`rst` its text for the report.

    The plot rule passes ``CaptionFile(output.caption)``; a parameter
    computed from an output is not compared between runs, and its path is
    what the report lists among the job's parameters. The report's caption
    template (``workflow/report/figure.rst``) prints :attr:`rst`.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"CaptionFile({str(self.path)!r})"

    @property
    def text(self) -> str:
        """The caption as written by ``nllbench plot``, or a note that it is missing."""
        if not self.path.exists():
            return f"(No caption: {self.path} does not exist; rerun the figure's plot job.)"
        return self.path.read_text(encoding="utf-8")

    @property
    def rst(self) -> str:
        """:attr:`text` with reStructuredText's markup characters escaped (names such as ``a_b_`` stay)."""
        out = self.text
        for ch in _RST_SPECIAL:
            out = out.replace(ch, "\\" + ch)
        return out
