"""Summary statistics over seeds: exact quantiles with infinities, seeded bootstrap intervals,
paired differences with the Wilcoxon test, rankings with ties."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wilcoxon
from support.counts import random_counts
from support.statistics_samples import _base

from nllbench.pipeline.cube import (
    LONG_COLUMNS,
    long_table,
    read_step_cube,
    step_cube,
    write_step_cube,
)
from nllbench.pipeline.statistics import (
    bootstrap_mean_interval,
    paired,
    paired_difference,
    quantile,
    ranking,
    summarise,
)

finite_lists = st.lists(st.floats(0, 1e6), min_size=1, max_size=12)


@given(finite_lists, st.floats(0, 1))
def test_quantile_matches_numpy_on_finite_data(values, p):
    assert quantile(values, p) == pytest.approx(float(np.quantile(values, p)), rel=1e-12, abs=1e-9)


def test_quantile_with_infinities_is_an_order_statistic_never_nan():
    assert quantile([1.0, math.inf, math.inf], 0.5) == math.inf
    assert quantile([1.0, 2.0, math.inf], 0.5) == 2.0
    assert quantile([1.0, 2.0, 3.0, math.inf], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, math.inf], 0.75) == math.inf
    assert quantile([math.inf, math.inf], 0.3) == math.inf


@settings(max_examples=30)
@given(finite_lists)
def test_bootstrap_interval_is_reproducible_and_inside_the_data(values):
    lo, hi = bootstrap_mean_interval(values)
    assert (lo, hi) == bootstrap_mean_interval(values)
    assert min(values) - 1e-9 <= lo <= np.mean(values) + 1e-6 * (1 + abs(np.mean(values)))
    assert np.mean(values) - 1e-6 * (1 + abs(np.mean(values))) <= hi <= max(values) + 1e-9


def test_bootstrap_interval_covers_the_mean_of_a_known_distribution():
    """Over many samples of size 30 from Exp(1), the 95 % interval covers 1 about 95 % of the time."""
    rng = np.random.default_rng(3)
    intervals = [bootstrap_mean_interval(rng.exponential(size=30)) for _ in range(200)]
    hits = [lo <= 1.0 <= hi for lo, hi in intervals]
    assert 0.85 <= np.mean(hits) <= 0.99


def test_bootstrap_with_infinite_runs():
    lo, hi = bootstrap_mean_interval([1.0, 2.0, math.inf])
    assert hi == math.inf and lo == 1.0
    assert bootstrap_mean_interval([math.inf] * 3) == (math.inf, math.inf)


def test_paired_difference_against_scipy_and_by_hand():
    a = np.array([3.0, 5.0, 4.0, 8.0, 6.5, 7.25])
    b = np.array([2.0, 2.5, 4.5, 1.0, 3.0, 2.0])
    out = paired_difference(a, b)
    d = a - b
    assert out["n_seeds"] == 6 and out["n_compared"] == 6 and out["n_both_infinite"] == 0
    assert out["mean_difference"] == pytest.approx(d.mean())
    assert out["median_difference"] == pytest.approx(np.median(d))
    assert out["a_lower"] == 1 and out["b_lower"] == 5
    assert out["wilcoxon_p"] == pytest.approx(wilcoxon(a, b).pvalue)
    assert out["ci95_low"] <= d.mean() <= out["ci95_high"]


def test_paired_difference_with_infinities_keeps_ranks():
    a = np.array([1.0, 2.0, math.inf, math.inf, 4.0, 5.0, 6.0])
    b = np.array([0.0, 0.5, 1.0, math.inf, 1.0, 1.0, 1.0])
    out = paired_difference(a, b)
    assert out["n_both_infinite"] == 1 and out["n_compared"] == 6
    assert out["mean_difference"] == math.inf
    big = np.array([1.0, 1.5, 1e9, 3.0, 4.0, 5.0])  # the same signs and ranks of |d|
    assert out["wilcoxon_p"] == pytest.approx(wilcoxon(big).pvalue)
    same = paired_difference([1.0, 2.0], [1.0, 2.0])
    assert same["wilcoxon_p"] == 1.0 and same["mean_difference"] == 0.0


def test_paired_difference_when_each_side_is_infinite_on_another_seed():
    """a = +inf on one seed, b = +inf on another: the mean difference is undefined (inf - inf), the
    interval (-inf, +inf) excludes nothing, and the signed ranks still compare them (the main job's
    MBM and MBM01 trajectory NLLs are such a pair)."""
    a = np.array([math.inf, 1.0, 2.0, 3.0, 4.0])
    b = np.array([1.0, math.inf, 1.0, 1.0, 1.0])
    out = paired_difference(a, b)
    assert math.isnan(out["mean_difference"])
    assert (out["ci95_low"], out["ci95_high"]) == (-math.inf, math.inf)
    assert out["median_difference"] == 2.0 and (out["a_lower"], out["b_lower"]) == (1, 4)
    big = np.array([1e9, -1e9, 1.0, 2.0, 3.0])  # the same signs and ranks of |d|
    assert out["wilcoxon_p"] == pytest.approx(wilcoxon(big).pvalue)
    two = paired_difference([math.inf, 1.0], [1.0, math.inf])
    assert math.isnan(two["median_difference"])  # its two middle values are -inf and +inf


def runs_table(values: dict[str, list[float]], measure: str = "nll") -> pd.DataFrame:
    rows = []
    for f, vals in values.items():
        for seed, v in enumerate(vals):
            rows.append(
                {
                    "scenario": "s",
                    "seed": seed,
                    "filter": f,
                    "clutter": 5.0,
                    "pd": 0.9,
                    "cov_scale": 1.0,
                    "temper": 1.0,
                    "marginal": "position",
                    "q": 1,
                    "measure": measure,
                    "value": v,
                }
            )
    return pd.DataFrame(rows)


def test_ranking_ties_where_paired_intervals_overlap():
    rng = np.random.default_rng(1)
    base = rng.normal(10, 3, size=20)  # the seed's own difficulty, shared by every filter
    runs = runs_table(
        {
            "good": list(base),
            "good2": list(base + rng.normal(0, 0.5, 20)),  # no systematic difference to "good"
            "bad": list(base + 2 + rng.normal(0, 0.1, 20)),
            "never": [math.inf] * 20,
        }
    )
    pairs = paired(runs)
    assert len(pairs) == 6 and set(pairs["n_seeds"]) == {20}
    ranks = ranking(pairs).set_index("filter")["rank"].to_dict()
    assert ranks == {"good": 1, "good2": 1, "bad": 3, "never": 4}
    mota = ranking(paired(runs_table({"a": [0.9, 0.8, 0.85, 0.9], "b": [0.1, 0.2, 0.15, 0.1]}, "mota")))
    assert mota.set_index("filter")["rank"].to_dict() == {"a": 1, "b": 2}  # higher MOTA is better


def test_summary_columns_and_no_nan_except_finite_only_of_all_infinite():
    runs = runs_table({"f": [1.0, 2.0, 4.0, math.inf], "g": [math.inf] * 4})
    s = summarise(runs).set_index("filter")
    f, g = s.loc["f"], s.loc["g"]
    assert f["n"] == 4 and f["n_infinite"] == 1 and f["mean"] == math.inf
    assert f["median"] == 3.0 and f["q25"] == 1.75 and f["q75"] == math.inf
    assert f["finite_mean"] == pytest.approx(7 / 3) and f["finite_median"] == 2.0
    assert g["median"] == math.inf and math.isnan(g["finite_mean"])
    assert not s.drop(columns=[c for c in s.columns if c.startswith("finite_")]).isna().any().any()


# ---------------------------------------------------------------------------
# the per-step cube
# ---------------------------------------------------------------------------


def test_cube_dimensions_masks_and_measure_selection(tmp_path):
    steps = np.arange(3)
    base = _base("williams15", "pmbm", 5.0, 1.0, 2)
    records = [
        ({**base, "q": 10}, "nll", steps, np.array([1.0, np.inf, 3.0])),
        ({**base, "q": 0}, "gospa", steps, np.array([0.5, 0.25, 0.0])),
        ({**base, "cov_scale": 4.0, "q": 10}, "nll", steps[:2], np.array([7.0, 8.0])),
        ({**base, "cov_scale": 4.0, "q": 0}, "gospa", steps[:2], np.array([0.5, 0.25])),
    ]
    cube = step_cube(records)
    assert cube["nll"].dims == (
        "scenario",
        "filter",
        "clutter",
        "pd",
        "cov_scale",
        "temper",
        "marginal",
        "q",
        "seed",
        "step",
    )
    assert "q" not in cube["gospa"].dims
    assert cube["nll"].attrs["ancillary_variables"] == "nll_present"
    assert cube["gospa"].attrs["ancillary_variables"] == "present"
    cell = cube["nll"].sel(cov_scale=4.0, q=10, seed=2).squeeze()
    np.testing.assert_array_equal(cell.values[:2], [7.0, 8.0])
    assert not bool(cube["nll_present"].sel(cov_scale=4.0, q=10, step=2).squeeze())
    assert cube["nll"].sel(cov_scale=1.0, step=1).squeeze().item() == math.inf
    only = long_table(cube, ["gospa"])
    assert set(only["measure"]) == {"gospa"} and len(only) == 5 and (only["q"] == 0).all()
    with pytest.raises(ValueError, match="measures: expected names"):
        long_table(cube, ["gopsa"])
    write_step_cube(cube, tmp_path / "steps.nc")
    import xarray as xr

    xr.Dataset({"x": ("row", [1.0])}, attrs={"content": "table"}).to_netcdf(tmp_path / "long.nc")
    with pytest.raises(ValueError, match="expected 'step cube'"):
        read_step_cube(tmp_path / "long.nc")
    with pytest.raises(FileNotFoundError, match="missing.nc: no such file"):
        read_step_cube(tmp_path / "missing.nc")


def test_empty_cube_gives_an_empty_long_table_with_its_columns():
    df = long_table(step_cube([]))
    assert list(df.columns) == LONG_COLUMNS and df.empty


SETTING = ("s", "pmb", 10.0, 0.9, 1.0, 1.0, "position")


def test_pooled_reliability_is_the_sum_of_the_runs_counts():
    from nllbench.pipeline.pooling import pooled_reliability

    rng = np.random.default_rng(5)
    runs = {seed: random_counts(rng) for seed in range(7)}
    table = pooled_reliability({SETTING: runs})
    count = sum(c.bin_count for c in runs.values())
    explained = sum(c.bin_explained for c in runs.values())
    r_sum = sum(c.bin_r_sum for c in runs.values())
    used = np.flatnonzero(count)
    assert table["bin_low"].tolist() == pytest.approx((used / 10).tolist())
    assert table["count"].tolist() == count[used].tolist()  # integers: exact
    assert table["explained"].tolist() == explained[used].tolist()
    np.testing.assert_allclose(table["r_sum"], r_sum[used], rtol=1e-15)
    np.testing.assert_allclose(table["frequency"], explained[used] / count[used], rtol=1e-15)
    assert (table["mean_r"] >= table["bin_low"]).all() and (table["mean_r"] < table["bin_high"]).all()
    assert set(table["n_runs"]) == {7} and not table.isna().any().any()


def test_pooled_anees_interval_is_the_chi_square_interval_of_the_pooled_pairs():
    from scipy.stats import chi2

    from nllbench.pipeline.pooling import pooled_calibration

    rng = np.random.default_rng(8)
    runs = {seed: random_counts(rng) for seed in range(4)}
    table = pooled_calibration({SETTING: runs}).set_index("measure")["value"]
    n = sum(c.nees_pairs for c in runs.values())
    nees = sum(c.nees_sum for c in runs.values())
    assert table["nees_pairs"] == n and table["nees_dof"] == 2 * n
    assert table["anees"] == pytest.approx(nees / n, rel=1e-14)
    assert table["anees_ci95_low"] == pytest.approx(chi2.ppf(0.025, 2 * n) / n, rel=1e-12)
    assert table["anees_ci95_high"] == pytest.approx(chi2.ppf(0.975, 2 * n) / n, rel=1e-12)
    inside = sum(c.nees_inside for c in runs.values())
    assert table["nees_inside95_share"] == pytest.approx(inside / n, rel=1e-15)
    covered = sum(c.card_covered for c in runs.values())
    assert table["cardinality_coverage90"] == pytest.approx(covered / 20, rel=1e-15)
    bern = sum(c.bernoullis for c in runs.values())
    brier = sum(c.brier_sum for c in runs.values())
    assert table["bernoullis"] == bern and table["brier"] == pytest.approx(brier / bern, rel=1e-14)
    gap = sum(c.bin_r_sum for c in runs.values()) - sum(c.bin_explained for c in runs.values())
    assert table["ece"] == pytest.approx(np.abs(gap).sum() / bern, rel=1e-12)


def test_scores_undefined_without_bernoullis_have_no_row_never_nan():
    from nllbench.pipeline.pooling import pooled_calibration, pooled_reliability

    rng = np.random.default_rng(2)
    phd = ("s", "phd", 10.0, 0.9, 1.0, 1.0, "position")
    counts = {phd: {0: random_counts(rng, bernoullis=False), 1: random_counts(rng, bernoullis=False)}}
    table = pooled_calibration(counts)
    assert not table["value"].isna().any()
    assert not {"brier", "ece", "anees", "anees_ci95_low", "nees_inside95_share"} & set(table["measure"])
    assert {"cardinality_coverage90", "cardinality_log_score", "bernoullis"} <= set(table["measure"])
    assert pooled_reliability(counts).empty


def test_infinite_cardinality_log_score_stays_infinite():
    from dataclasses import replace

    from nllbench.pipeline.pooling import pooled_calibration

    rng = np.random.default_rng(4)
    runs = {0: random_counts(rng), 1: replace(random_counts(rng), card_log_score_sum=math.inf)}
    table = pooled_calibration({SETTING: runs}).set_index("measure")["value"]
    assert table["cardinality_log_score"] == math.inf


def test_new_run_measures_are_paired_and_only_directional_ones_ranked():
    values = {"pmb": [0.5, 0.6, 0.7, 0.55], "phd": [0.2, 0.25, 0.3, 0.22]}
    runs = pd.concat([runs_table(values, "hota"), runs_table(values, "anees")], ignore_index=True)
    runs["q"] = 0
    pairs = paired(runs)
    assert set(pairs["measure"]) == {"hota", "anees"}
    ranks = ranking(pairs)
    assert set(ranks["measure"]) == {"hota"}  # ANEES is best at d, not at an end
    best = ranks[ranks["rank"] == 1]["filter"].tolist()
    assert best == ["pmb"]  # HOTA: higher is better
