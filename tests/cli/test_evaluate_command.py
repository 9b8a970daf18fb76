"""``nllbench evaluate`` on every filter's posterior; mismatched files refused."""

from __future__ import annotations

import numpy as np

from nllbench.cli import main
from nllbench.store import read_metrics, read_posterior


def test_cli_evaluate_every_filter(tmp_path, capsys):
    sc_path = tmp_path / "s.nc"
    assert (
        main(["simulate", "--scenario", "williams15", "--seed", "2", "--steps", "10", "-o", str(sc_path)])
        == 0
    )
    for name in ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"):
        post = tmp_path / f"{name}.nc"
        assert main(["filter", "-q", "--filter", name, str(sc_path), "-o", str(post)]) == 0
        out = tmp_path / f"{name}.metrics.nc"
        assert main(["evaluate", str(post), str(sc_path), "-o", str(out), "--q", "1", "10"]) == 0
        ds = read_metrics(out)
        assert ds.sizes["step"] == 10 and list(ds["q"].values) == [1, 10]
        assert not np.isnan(ds["nll_value"].values).any()
        assert float(ds["theorem1_max_abs_difference"]) < 1e-9
        assert ds.attrs["filter"] == name
        summary = (tmp_path / f"{name}.metrics.summary.csv").read_text().splitlines()
        assert len(summary) == 2 and "nll_q1" in summary[0]
    text = capsys.readouterr().out
    assert "Theorem 1: max |NLL - RHS|" in text
    assert len(read_posterior(tmp_path / "pmbm.nc")) == 10


def test_cli_evaluate_rejects_mismatched_files(tmp_path):
    a, b = tmp_path / "a.nc", tmp_path / "b.nc"
    assert main(["simulate", "--scenario", "williams15", "--steps", "5", "-o", str(a)]) == 0
    assert main(["simulate", "--scenario", "williams15", "--steps", "6", "-o", str(b)]) == 0
    assert main(["filter", "-q", "--filter", "phd", str(a), "-o", str(tmp_path / "p.nc")]) == 0
    assert main(["evaluate", str(tmp_path / "p.nc"), str(b), "-o", str(tmp_path / "m.nc")]) == 2
    assert not (tmp_path / "m.nc").exists()
