"""The fill-ins of a scoring run with their calibrations fitted: :func:`fitted_fill_ins`.

What ``nllbench score``'s fill-in options ask for (``--undetected-rate``,
``--fov``, ``--default-std``, ``--existence-one`` and the ``--fit-*-on``
calibration pairs) as one :class:`~nllbench.trackers.fillins.FillIns`; each
calibration pair is read by its format (:func:`nllbench.trackers.formats.read_inputs`)
and fitted by :mod:`nllbench.trackers.fitting`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.fitting import fit_constant_existence, fit_score_calibration, fit_undetected_rate
from nllbench.trackers.formats import ReadOptions, read_inputs
from nllbench.trackers.tracks import DEFAULT_STATE


def fov_box(fov: Sequence[float] | None):
    """``LOW... HIGH...`` (``--fov``) as (low, high) tuples, or (None, None)."""
    if fov is None:
        return None, None
    if len(fov) % 2:
        raise ValueError(f"--fov: expected LOW... HIGH... (an even count), got {len(fov)} numbers")
    half = len(fov) // 2
    return tuple(fov[:half]), tuple(fov[half:])


def fitted_fill_ins(
    *,
    state=DEFAULT_STATE,
    settings: EvaluationSettings = EvaluationSettings(),
    undetected_rate: float | None = None,
    fov: Sequence[float] | None = None,
    default_std: float | None = None,
    existence_one: bool = False,
    fit_undetected_on: Sequence | None = None,
    fit_score_on: Sequence | None = None,
    fit_constant_existence_on: Sequence | None = None,
    threshold: float = 2.0,
    frames=None,
    read: ReadOptions | None = None,
    say: Callable[[str], None] = print,
) -> FillIns:
    """The fill-ins asked for, each calibration fitted on its (tracks, truth) pair and said.

    ``fov``: LOW... HIGH... of the undetected-object intensity's box (needed
    with a rate); ``fit_*_on``: (tracks, truth) paths or tables in any input
    format (``read``); ``threshold``: the matching distance of the score and
    constant-existence fits (a MOTChallenge pair matched by IoU: its constant existence
    by TrackEval's CLEAR at IoU >= 0.5, as it is scored); ``frames``: None or ``"union"`` (for every pair).
    ``say`` gets one line per fit (``nllbench score`` prints them).
    """
    fov_low, fov_high = fov_box(fov)
    if undetected_rate is not None and fit_undetected_on:
        raise ValueError("score: give --undetected-rate or --fit-undetected-on, not both")
    if (undetected_rate or fit_undetected_on) and fov_low is None:
        raise ValueError("score: the undetected-object intensity needs its box: --fov LOW... HIGH...")

    def pair_and_boxes(tracks_truth):
        return read_inputs(*tracks_truth, read or ReadOptions(state=tuple(state)))

    def pair(tracks_truth):
        return pair_and_boxes(tracks_truth)[0]

    calibration = None
    if fit_score_on:
        calibration = fit_score_calibration(
            *pair(fit_score_on), state=state, threshold=threshold, frames=frames
        )
        say(f"score calibration: r = expit({calibration.intercept:.6g} + {calibration.slope:.6g} * score)")
    options = (fov_low, fov_high, default_std, calibration, existence_one)
    constant = None
    if fit_constant_existence_on:
        if existence_one:
            raise ValueError("score: give --existence-one or --fit-constant-existence-on, not both")
        tables, boxes = pair_and_boxes(fit_constant_existence_on)
        if boxes is not None:  # MOTChallenge files: the scoring's own matching (IoU), not centre distance
            from nllbench.trackers.motchallenge import fit_constant_existence_boxes

            constant = fit_constant_existence_boxes(boxes)
        else:
            constant = fit_constant_existence(*tables, state=state, threshold=threshold, frames=frames)
        say(
            f"constant existence: r = {constant.r:.6g} "
            f"({constant.n_matched} of {constant.n_rows} rows matched)"
        )
    fill = FillIns(undetected_rate or 0.0, *options, constant_existence=constant)
    if fit_undetected_on:
        fit = fit_undetected_rate(
            *pair(fit_undetected_on), state=state, frames=frames, fill=fill, settings=settings
        )
        say(f"fitted undetected rate {fit['rate']:.6g} (calibration NLL {fit['calibration_nll']:.6g})")
        fill = FillIns(fit["rate"], *options, fit, constant_existence=constant)
    return fill
