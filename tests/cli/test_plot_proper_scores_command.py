"""``nllbench plot proper_scores`` draws the proper-scores figure from the tables."""

from __future__ import annotations

import pytest
from support.proper_score_study import study_runs

from nllbench.cli import main
from nllbench.pipeline.statistics import paired, ranking, summarise


@pytest.fixture(scope="module")
def tables():
    runs = study_runs()
    pairs = paired(runs)
    return summarise(runs), pairs, ranking(pairs)


def test_plot_command_draws_it(tmp_path, tables):
    summary, pairs, ranks = tables
    summary.to_csv(tmp_path / "summary.csv", index=False)
    out = tmp_path / "fig" / "proper_scores.png"
    assert main(["plot", "proper_scores", "--tables", str(tmp_path), "-o", str(out)]) == 0
    assert out.exists() and out.with_suffix(".pdf").exists()
