"""The leaderboard page: NLL/GOSPA agreement computed from the tables, and explained."""

from __future__ import annotations

import itertools
import json

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
    # 2 leaderboard rows (filters), 3 paired rows (NLL, GOSPA, MOTA), 1 disagreement
    assert page.count("<tr><td class=l>s, clutter 10, P_D 0.9</td>") == 2 + 3 + 1
    assert "sweep.seeds" in page and "{&quot;" not in page  # settings as a list, not a JSON blob
    assert not list(tmp_path.glob(".page.html.*"))
