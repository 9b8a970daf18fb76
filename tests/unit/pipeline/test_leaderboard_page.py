"""The leaderboard page: NLL/GOSPA agreement computed from the tables, and explained."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pandas as pd

from nllbench.measures.names import NLL_TERM_MEASURES
from nllbench.pipeline.report import agreement, explain, write_leaderboard
from nllbench.pipeline.statistics import paired, ranking, summarise

TERMS = list(NLL_TERM_MEASURES)


def runs() -> pd.DataFrame:
    """'sharp' has the better GOSPA but over-confident covariances (its NLL is lowest at s = 4)."""
    rng = np.random.default_rng(2)
    rows = []
    base = {"scenario": "s", "clutter": 10.0, "pd": 0.9, "temper": 1.0, "marginal": "position"}
    for f, s, seed in itertools.product(["calibrated", "sharp"], [0.25, 1.0, 4.0], range(8)):
        row = {**base, "filter": f, "cov_scale": s, "seed": seed}
        noise = rng.normal(0, 0.05)
        if f == "calibrated":
            loc = 5 + abs(np.log(s)) + noise
            gospa = 3.0 + noise
        else:
            loc = 9 + 2 * abs(np.log(s / 4)) + noise
            gospa = 2.0 + noise
        for t in TERMS:
            rows.append({**row, "q": 10, "measure": t, "value": loc if t == "nll_localization" else 0.5})
        rows.append({**row, "q": 10, "measure": "nll", "value": loc + 2.5})
        rows.append({**row, "q": 0, "measure": "gospa_mean", "value": gospa})
        rows.append({**row, "q": 0, "measure": "mota", "value": 0.5})
    return pd.DataFrame(rows)


def test_disagreement_is_found_and_explained_from_the_tables():
    r = runs()
    summary, pairs = summarise(r), paired(r)
    agree = agreement(summary, pairs, 10)
    assert len(agree) == 1
    (d,) = agree[0]["discordant"]
    assert d["nll_prefers"] == "calibrated" and d["gospa_prefers"] == "sharp" and d["significant"]
    why = explain(summary, ("s", 10.0, 0.9), "calibrated", "sharp", 10)
    assert "localisation" in why and "s = 4" in why and "over-confident" in why


def test_page_is_self_contained_with_every_row(tmp_path):
    r = runs()
    summary, pairs = summarise(r), paired(r)
    summary.to_csv(tmp_path / "summary.csv", index=False)
    pairs.to_csv(tmp_path / "paired.csv", index=False)
    ranking(pairs).to_csv(tmp_path / "ranking.csv", index=False)
    (tmp_path / "provenance.json").write_text(
        json.dumps({"config": {"sweep": {"seeds": 8, "filters": ["a"]}}})
    )
    out = write_leaderboard(tmp_path, [], tmp_path / "page.html")
    page = out.read_text()
    assert "http" not in page.replace("http-equiv", "")  # no external resources
    # 2 leaderboard rows (filters), 1 disagreement; the 3 paired rows (NLL, GOSPA, MOTA) in the
    # setting's folded table
    assert page.count("<tr><td class=l>s, clutter 10, P_D 0.9</td>") == 1
    # the leaderboard names a setting by what varies in the study (here the clutter rate), in full on hover
    assert page.count('<tr><td class=l title="s, clutter 10, P_D 0.9">clutter 10</td>') == 2
    folded = page[page.index("<div id=paired>") :]
    folded = folded[: folded.index("</div>")]
    assert folded.count("<details>") == 1 and "<b>s, clutter 10, P_D 0.9</b>: 3 comparisons" in folded
    assert [folded.count(f"<tr><td class=l>{m}</td>") for m in ("NLL", "GOSPA", "MOTA")] == [1, 1, 1]
    assert not re.search(r"\b(\w+) \1\b", re.sub(r"<[^>]+>", " ", page))  # no "the the"
    assert "No run's NLL is infinite." in page
    assert "sweep.seeds" in page and "{&quot;" not in page  # settings as a list, not a JSON blob
    assert not list(tmp_path.glob(".page.html.*"))


def cube_records(rng, empty: dict) -> list:
    """Step-cube records of n_estimates and cardinality_mean (8 steps) for 2 filters x 2 seeds x 2 scales.

    ``empty``: {(filter, seed): steps with no estimate while the expected count rounds to >= 1}; other
    steps have no estimate only where the expected count is below 0.5 (not a warning).
    """
    records = []
    for f, seed, s in itertools.product(["cphd", "pmbm"], [0, 1], [0.25, 1.0]):
        lab = {"scenario": "s", "filter": f, "clutter": 10.0, "pd": 0.9, "cov_scale": s, "temper": 1.0}
        lab.update(marginal="position", q=0, seed=seed)
        n_est = rng.integers(1, 4, size=8).astype(float)
        mean = rng.uniform(1.0, 4.0, size=8)
        n_est[7], mean[7] = 0.0, 0.49  # nothing expected, nothing reported: no warning
        for k in empty.get((f, seed), []):
            n_est[k], mean[k] = 0.0, 0.5 + k  # rounds to >= 1
        if s != 1.0:
            n_est[:] = 0.0  # a probe's cells are not the run's own: never counted
        steps = np.arange(8)
        records += [(lab, "n_estimates", steps, n_est), (lab, "cardinality_mean", steps, mean)]
    return records


def test_empty_estimator_steps_are_counted_from_the_step_cube():
    from nllbench.pipeline.cube import empty_estimate_steps, step_cube

    empty = {("cphd", 0): [0, 3], ("cphd", 1): [5], ("pmbm", 1): [2]}
    got = empty_estimate_steps(step_cube(cube_records(np.random.default_rng(3), empty)))
    assert list(got.columns) == ["scenario", "filter", "clutter", "pd", "seed", "empty_steps", "steps"]
    want = {(f, seed): len(empty.get((f, seed), [])) for f in ("cphd", "pmbm") for seed in (0, 1)}
    assert {(r.filter, r.seed): r.empty_steps for r in got.itertuples()} == want
    assert (got["steps"] == 8).all()


def test_page_names_infinite_runs_empty_estimates_and_missing_identities(tmp_path):
    from nllbench.pipeline.cube import step_cube, write_step_cube

    r = runs()
    # 'sharp' is infinite in seed 0 through its false term; it is renamed cphd (no lasting identities)
    inf = (
        (r["filter"] == "sharp")
        & (r["seed"] == 0)
        & (r["cov_scale"] == 1.0)
        & r["measure"].isin(["nll", "nll_false"])
    )
    r.loc[inf, "value"] = np.inf
    r["filter"] = r["filter"].replace({"sharp": "cphd"})
    r = pd.concat([r, r[r["measure"] == "mota"].assign(measure="idf1", value=0.01)], ignore_index=True)
    summary, pairs = summarise(r), paired(r)
    summary.to_csv(tmp_path / "summary.csv", index=False)
    pairs.to_csv(tmp_path / "paired.csv", index=False)
    ranking(pairs).to_csv(tmp_path / "ranking.csv", index=False)
    (tmp_path / "provenance.json").write_text(json.dumps({"config": {}}))
    empty = {("cphd", 0): [0, 3], ("cphd", 1): [5]}
    write_step_cube(step_cube(cube_records(np.random.default_rng(4), empty)), tmp_path / "steps.nc")
    page = write_leaderboard(tmp_path, [], tmp_path / "page.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert (
        "cphd , s, clutter 10, P_D 0.9: NLL infinite in 1 of 8 seeds; its false term is +inf: every kept "
        "global hypothesis holds more sure (r = 1) Bernoullis than there are true objects" in text
    )
    assert 'title="seeds with an infinite value: its false term is +inf' in page
    # counted once, per filter, grammatically
    assert "At 3 steps in 2 runs, a filter's point estimator reported no object" in text
    assert "cphd : 3 steps of 16 in 2 runs of 2 (at clutter 10)" in text
    assert "(2 warnings;" in text and "pmbm :" not in text.split("Point estimator")[1].split("Where NLL")[0]
    # the identity note, with this run's numbers, and its mark in the leaderboard
    assert "cphd: the estimates carry no track identities that last" in text
    assert "calibrated: MOTA 0.50, IDF1 0.01, GOSPA 3.00; cphd: MOTA 0.50, IDF1 0.01, GOSPA 2.01." in text
    assert page.count('href="#identities"') == 1
