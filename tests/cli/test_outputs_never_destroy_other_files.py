"""The command line never destroys what nllbench did not write, refuses conflicting inputs and
names the option at fault (issue 20, sections 1, 2 and 5), and explains itself (issue 22, section 3).

Every case builds its small inputs here: a 3-step Williams batch of two seeds, its PMB
posteriors, their metrics, the tables, and a tracks table per seed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pytest
from support.paths import ROOT

from nllbench.cli import HelpFormatter, build_parser, main
from nllbench.options import MAX_Q
from nllbench.pipeline.conflicts import find_conflicts, read_run_records, run_record
from nllbench.store import read_scenario

FOREIGN = "two years of work\n"


def run(args: list, capsys) -> tuple[int, str]:
    """(exit status, stderr) of one command; argparse's own errors exit through SystemExit."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """sim/, post/ (PMB), met/ (cut-off 2), met_c5/ (cut-off 5), tab/, tracks/ and single files."""
    d = tmp_path_factory.mktemp("safety")
    sim = ["simulate", "--scenario", "williams15", "--steps", "3"]
    assert main([*sim, "--seeds", "0", "1", "--output-dir", str(d / "sim")]) == 0
    flt = ["filter", "-q", "--filter", "pmb", "--input-dir", str(d / "sim")]
    assert main([*flt, "--output-dir", str(d / "post")]) == 0
    ev = ["evaluate", "--posterior-dir", str(d / "post"), "--scenario-dir", str(d / "sim"), "--q", "1"]
    assert main([*ev, "--output-dir", str(d / "met")]) == 0
    assert main([*ev, "--output-dir", str(d / "met_c5"), "--cutoff", "5"]) == 0
    assert main([*ev, "--output-dir", str(d / "met_q2"), "--q", "2"]) == 0  # differs in Q only
    assert main(["aggregate", str(d / "met"), "--out-dir", str(d / "tab")]) == 0
    (d / "tracks").mkdir()
    for seed in (0, 1):
        truth = read_scenario(d / "sim" / f"seed{seed}.nc").truth
        rows = [
            dict(frame=k, id=j, x=x[0] + 0.5, y=x[1]) for k, X in enumerate(truth) for j, x in enumerate(X)
        ]
        pd.DataFrame(rows).to_csv(d / "tracks" / f"seed{seed}.csv", index=False)
    shutil.copy(d / "sim" / "seed0.nc", d / "s.nc")
    shutil.copy(d / "post" / "seed0.nc", d / "p.nc")
    shutil.copy(d / "tracks" / "seed0.csv", d / "tracks.csv")
    pd.DataFrame({"item": ["seed0"], "seconds": [1.0]}).to_csv(d / "t.csv", index=False)
    pd.DataFrame(
        {"step": [1, 2], "id": [0, 0], "x": [1.0, 2.0], "y": [1.0, 1.0], "vx": [1.0, 1.0], "vy": [0.0, 0.0]}
    ).to_csv(d / "truth.csv", index=False)
    return d


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to show that a refused command changed nothing)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------
# Section 1: a directory holding anything nllbench did not write is never replaced


BATCH_COMMANDS = {
    "simulate": ["simulate", "--scenario", "williams15", "--steps", "2", "--seeds", "0", "--output-dir", "{out}"],  # noqa: E501
    "filter": ["filter", "-q", "--filter", "pmb", "--input-dir", "{sim}", "--output-dir", "{out}"],
    "evaluate": ["evaluate", "--posterior-dir", "{post}", "--scenario-dir", "{sim}", "--q", "1", "--output-dir", "{out}"],  # noqa: E501
    "evaluate grid": ["evaluate", "--posterior-dir", "{post}", "--scenario-dir", "{sim}", "--q", "1", "--cov-scales", "1", "2", "--output-dir", "{grid}"],  # noqa: E501
    "score": ["score", "--tracks-dir", "{tracks}", "--scenario-dir", "{sim}", "--existence-one", "--default-std", "1", "--q", "1", "--output-dir", "{out}"],  # noqa: E501
    "aggregate": ["aggregate", "{met}", "--out-dir", "{out}"],
    "example": ["example", "1", "--out-dir", "{out}"],
    "audit": ["audit", "--config", "{audit}", "--out-dir", "{out}"],
    "identity": ["identity", "--config-json", '{{"seeds": 1}}', "--rows", "{rows}", "--out-dir", "{out}"],
}  # fmt: skip


def test_every_command_with_a_directory_output_is_covered():
    """A new command (or option) that writes a directory must join BATCH_COMMANDS."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    with_dirs = set()
    for name, p in sub.choices.items():
        actions = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        for q in [p, *(c for a in actions for c in a.choices.values())]:
            if any(a.dest in ("output_dir", "out_dir") for a in q._actions):
                with_dirs.add(name)
    assert with_dirs == {c.split()[0] for c in BATCH_COMMANDS}


@pytest.mark.parametrize("command", list(BATCH_COMMANDS))
def test_a_batch_command_never_replaces_a_directory_it_did_not_write(data, tmp_path, capsys, command):
    out = tmp_path / "thesis_q1_c1"  # also the grid's (Q = 1, scale 1) directory
    out.mkdir()
    (out / "thesis.tex").write_text(FOREIGN)
    names = dict(
        out=out,
        grid=tmp_path / "thesis_q{q}_c{cov}",
        sim=data / "sim",
        post=data / "post",
        tracks=data / "tracks",
        met=data / "met",
        audit=ROOT / "config/audit/audit.yaml",
        rows=data / "t.csv",
    )
    before = snapshot(data)
    code, err = run([a.format(**names) for a in BATCH_COMMANDS[command]], capsys)
    assert code == 2
    option = "--out-dir" if "--out-dir" in BATCH_COMMANDS[command] else "--output-dir"
    assert f"{option} {str(out)!r}: refusing to replace a directory that nllbench did not write" in err
    assert "thesis.tex" in err and "Traceback" not in err
    assert (out / "thesis.tex").read_text() == FOREIGN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis_q1_c1"]  # nothing else written
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert snapshot(data) == before


# ---------------------------------------------------------------------------------------------
# Section 1: an output that is, contains or lies inside an input is refused before any work

SAME_FILE = [
    # (command, output option, output, input option, input)
    (["filter", "-q", "--filter", "pmb", "{s}", "-o", "{s}"], "-o", "s.nc", "SCENARIO_FILE", "s.nc"),
    (["filter", "-q", "--filter", "pmb", "{s}", "-o", "{x}", "--timing", "{s}"], "--timing", "s.nc", "SCENARIO_FILE", "s.nc"),  # noqa: E501
    (["evaluate", "{p}", "{s}", "-o", "{p}"], "-o", "p.nc", "POSTERIOR", "p.nc"),
    (["evaluate", "{p}", "{s}", "-o", "{x}", "--summary", "{s}"], "--summary", "s.nc", "SCENARIO_FILE", "s.nc"),  # noqa: E501
    (["score", "{tr}", "{s}", "--existence-one", "-o", "{x}", "--per-frame", "{tr}"], "--per-frame", "tracks.csv", "TRACKS", "tracks.csv"),  # noqa: E501
    (["score", "{tr}", "{s}", "--existence-one", "-o", "{s}"], "-o", "s.nc", "TRUTH", "s.nc"),
    (["score", "{tr}", "{s}", "-o", "{x}", "--fit-score-on", "{t}", "{s}", "--summary", "{t}"], "--summary", "t.csv", "--fit-score-on", "t.csv"),  # noqa: E501
    (["score", "{tr}", "{s}", "--existence-one", "-o", "{x}", "--scenario-file", "{p}", "--summary", "{p}"], "--summary", "p.nc", "--scenario-file", "p.nc"),  # noqa: E501
    (["tables", "long", "--tables", "{tab}", "-o", "{tab}/steps.nc"], "-o", "tab/steps.nc", "--tables", "tab/steps.nc"),  # noqa: E501
    (["gospa-table", "--tables", "{tab}", "-o", "{tab}/steps.nc"], "-o", "tab/steps.nc", "--tables", "tab/steps.nc"),  # noqa: E501
    (["timing", "{t}", "-o", "{t}"], "-o", "t.csv", "FILES", "t.csv"),
    (["leaderboard", "--tables", "{tab}", "-o", "{tab}/summary.csv"], "-o", "tab/summary.csv", "--tables", "tab/summary.csv"),  # noqa: E501
    (["plot", "clutter", "--tables", "{tab}", "-o", "{tab}/summary.csv"], "-o", "tab/summary.csv", "--tables", "tab/summary.csv"),  # noqa: E501
    (["simulate", "--scenario", "williams15", "--truth", "{truth}", "-o", "{truth}"], "-o", "truth.csv", "--truth", "truth.csv"),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize("command, out_option, output, in_option, given", SAME_FILE)
def test_a_file_output_equal_to_an_input_is_refused(
    data, capsys, command, out_option, output, in_option, given
):
    names = dict(
        s=data / "s.nc", p=data / "p.nc", x=data / "new" / "m.nc", tr=data / "tracks.csv",
        t=data / "t.csv", tab=data / "tab", truth=data / "truth.csv",
    )  # fmt: skip
    before = snapshot(data)
    code, err = run([a.format(**names) for a in command], capsys)
    assert code == 2
    same = f"is the same path as the input {in_option} {str(data / given)!r}"
    expected = f"{out_option} {str(data / output)!r}: {same}"
    assert expected in err, err
    assert snapshot(data) == before  # the input untouched, nothing written
    assert not (data / "new").exists()


def test_a_hard_link_to_an_input_is_the_input(data, tmp_path, capsys):
    (tmp_path / "link.nc").hardlink_to(data / "s.nc")
    code, err = run(["filter", "-q", "--filter", "pmb", data / "s.nc", "-o", tmp_path / "link.nc"], capsys)
    assert code == 2 and "is the same path as the input SCENARIO_FILE" in err


@pytest.mark.parametrize(
    "command, message",
    [
        (["filter", "-q", "--filter", "pmb", "--input-dir", "{sim}", "--output-dir", "{sim}"],
         "--output-dir '{sim}': is the same path as the input --input-dir '{sim}'"),
        (["evaluate", "--posterior-dir", "{post}", "--scenario-dir", "{sim}", "--output-dir", "{post}"],
         "--output-dir '{post}': is the same path as the input --posterior-dir '{post}'"),
        (["evaluate", "--posterior-dir", "{post}", "--scenario-dir", "{sim}", "--output-dir", "{sim}/m"],
         "--output-dir '{sim}/m': lies inside the input directory --scenario-dir '{sim}'"),
        (["score", "--tracks-dir", "{tracks}", "--scenario-dir", "{sim}", "--existence-one", "--output-dir", "{tracks}"],  # noqa: E501
         "--output-dir '{tracks}': is the same path as the input --tracks-dir '{tracks}'"),
        (["aggregate", "{met}", "--out-dir", "{met}"],
         "--out-dir '{met}': is the same path as the input METRICS_DIRS '{met}'"),
        (["aggregate", "{root}/parent/sub/met", "--out-dir", "{root}/parent"],
         "--out-dir '{root}/parent': contains the input METRICS_DIRS '{root}/parent/sub/met'"),
        (["simulate", "--scenario", "williams15", "--truth", "{root}/parent/truth.csv", "--seeds", "0", "--output-dir", "{root}/parent"],  # noqa: E501
         "--output-dir '{root}/parent': contains the input --truth '{root}/parent/truth.csv'"),
        (["timing", "{root}/parent/sub/met/summary.csv", "-o", "{root}/parent/sub/met"],
         "-o '{root}/parent/sub/met': expected a file path, but '{root}/parent/sub/met' is a directory"),
    ],
)  # fmt: skip
def test_a_directory_output_against_its_inputs(data, tmp_path, capsys, command, message):
    shutil.copytree(data / "met", tmp_path / "parent" / "sub" / "met")
    shutil.copy(data / "truth.csv", tmp_path / "parent" / "truth.csv")
    names = dict(
        sim=data / "sim", post=data / "post", tracks=data / "tracks", met=data / "met", root=tmp_path
    )
    before, inside = snapshot(data), snapshot(tmp_path)
    code, err = run([a.format(**names) for a in command], capsys)
    assert code == 2
    assert message.format(**names) in err, err
    assert snapshot(data) == before and snapshot(tmp_path) == inside


def test_outputs_beside_the_read_files_of_a_tables_directory_are_allowed(data, tmp_path, capsys):
    """The workflow writes tables/gospa.csv next to tables/steps.nc: only the files read are inputs."""
    tab = tmp_path / "tab"
    shutil.copytree(data / "tab", tab)
    assert main(["gospa-table", "--tables", str(tab), "-o", str(tab / "gospa.csv")]) == 0
    assert main(["gospa-table", "--tables", str(tab), "-o", str(tab / "gospa.csv")]) == 0  # a rerun
    assert main(["tables", "long", "--tables", str(tab), "-o", str(tab / "steps.csv")]) == 0
    assert main(["leaderboard", "--tables", str(tab), "-o", str(tab / "page.html")]) == 0


# ---------------------------------------------------------------------------------------------
# Section 2: conflicting inputs are refused, not resolved by argument order


@pytest.mark.parametrize("order", [("met", "met_c5"), ("met_c5", "met")])
def test_aggregate_refuses_one_run_evaluated_with_other_settings(data, tmp_path, capsys, order):
    a, b = (data / name for name in order)
    code, err = run(["aggregate", a, b, "--out-dir", tmp_path / "tab"], capsys)
    assert code == 2
    values = ("2.0", "5.0") if order[0] == "met" else ("5.0", "2.0")
    assert f"METRICS_DIRS: {str(a / 'seed0.nc')!r} and {str(b / 'seed0.nc')!r} hold the same run" in err
    assert f"cutoff: {values[0]} vs {values[1]}" in err and "(1 more run differs alike)" in err
    assert not (tmp_path / "tab").exists()


def test_aggregate_accepts_the_same_runs_computed_alike(data, tmp_path, capsys):
    """The same directory twice, a copy of it, or directories that differ only in Q: harmless."""
    shutil.copytree(data / "met", tmp_path / "copy")
    for dirs in (
        [data / "met", data / "met"],
        [data / "met", tmp_path / "copy"],
        [data / "met", data / "met_q2"],
    ):
        out = tmp_path / "tab"
        assert main(["aggregate", *map(str, dirs), "--out-dir", str(out)]) == 0
    alone = pd.read_csv(data / "tab" / "summary.csv")
    for dirs in ([data / "met", data / "met"], [data / "met", tmp_path / "copy"]):
        assert main(["aggregate", *map(str, dirs), "--out-dir", str(out)]) == 0
        pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv"), alone)


def attrs(**changes) -> dict:
    """Global attributes of a metrics file (those the conflict check reads), with ``changes``."""
    import json

    evaluation = {"cutoff": 2.0, "p": 1.0, "qs": [1], "cov_scale": 1.0, "temper": 1.0, "marginal": "position"}
    evaluation.update(changes.pop("evaluation", {}))
    out = {
        "scenario": "williams15", "seed": 0, "filter": "pmbm", "clutter_rate": 10.0, "p_detection": 0.9,
        "steps": 81, "p_survival": 0.99, "evaluation_settings": json.dumps(evaluation),
        "filter_parameters": json.dumps({"gate": 20.0, "max_hypotheses": 200}),
    }  # fmt: skip
    out.update(changes)
    return out


@pytest.mark.parametrize(
    "other, differs",
    [
        (attrs(), []),
        (attrs(evaluation={"qs": [1, 10]}), []),  # a grid: other Q only
        (attrs(evaluation={"qs": [10], "exact": True}), []),  # a grid computes the exact NLL once
        (attrs(evaluation={"cov_scale": 4.0}), None),  # another run (a probe), not a conflict
        (attrs(seed=1), None),
        (attrs(evaluation={"cutoff": 5.0}), ["cutoff"]),
        (attrs(filter_parameters='{"gate": 30.0, "max_hypotheses": 200}'), ["filter_parameters.gate"]),
        (attrs(steps=40), ["steps"]),
        (attrs(fill_ins='{"existence": "r = 1 (assumed)"}'), ["fill_ins.existence"]),
    ],
)
def test_find_conflicts_names_the_differing_settings(other, differs):
    first = run_record("a/seed0.nc", attrs())
    second = run_record("b/seed0.nc", other)
    found = find_conflicts([first, second])
    if not differs:
        assert found == []
    else:
        assert [(x.path.name, y.path.parent.name, d) for x, y, d in found] == [("seed0.nc", "b", differs)]
    assert find_conflicts([first, run_record("a/seed0.nc", other)]) == []  # one file: one record


def _fitted(q: int, rate: float, truth: str = "cal/seed100.nc", window: int = 10, given: float = 0.0) -> str:
    """A tracker's fill-ins as ``nllbench score`` records them: an undetected rate fitted at Q = ``q``
    beside a value the user set (``given``, as an unlisted presence R given rather than fitted)."""
    fitted = {"rate": rate, "calibration_nll": 400.0 + rate, "q": q, "truth": truth, "window": window}
    member = {"kind": "uniform Poisson", "rate": rate, "given": {"R": given}, "fitted": fitted}
    return json.dumps({"undetected": member})


@pytest.mark.parametrize(
    "other, differs",
    [
        # the grid's other Q: the fill-in is fitted at that Q, so the numbers it found differ by design
        (attrs(evaluation={"qs": [10]}, fill_ins=_fitted(10, 0.2500115)), []),
        # fitted on another calibration set, or with another window: another setting
        (
            attrs(evaluation={"qs": [10]}, fill_ins=_fitted(10, 0.25, truth="cal/seed7.nc")),
            ["fill_ins.undetected"],
        ),
        (attrs(evaluation={"qs": [10]}, fill_ins=_fitted(10, 0.25, window=5)), ["fill_ins.undetected"]),
        # the same Q and other numbers: not one fit
        (attrs(fill_ins=_fitted(1, 0.3)), ["fill_ins.undetected"]),
        # a value the user set beside the fit (not found by it) still counts
        (attrs(evaluation={"qs": [10]}, fill_ins=_fitted(10, 0.2500115, given=0.5)), ["fill_ins.undetected"]),
    ],
)
def test_fill_ins_fitted_at_each_files_q_are_compared_by_what_they_were_fitted_on(other, differs):
    """The numbers a fit found may differ between files of different Q; its inputs and given values not."""
    first = run_record("a/seed0.nc", attrs(fill_ins=_fitted(1, 0.2499999)))
    found = find_conflicts([first, run_record("b/seed0.nc", other)])
    assert [d for _, _, d in found] == ([differs] if differs else [])


def test_the_proper_scores_settings_count_only_where_they_were_computed():
    with_scores = run_record("a/seed0.nc", attrs(evaluation={"proper_scores": True, "energy_samples": 100}))
    without = run_record("b/seed0.nc", attrs(evaluation={"proper_scores": False, "energy_samples": 50}))
    other = run_record("c/seed0.nc", attrs(evaluation={"proper_scores": True, "energy_samples": 50}))
    assert find_conflicts([with_scores, without]) == []
    assert [d for _, _, d in find_conflicts([with_scores, other])] == [["energy_samples"]]


def test_read_run_records_skips_what_the_aggregation_will_name(data, tmp_path):
    (tmp_path / "seed0.nc").write_text("not NetCDF")
    assert read_run_records([tmp_path]) == []
    assert [r.path.name for r in read_run_records([data / "met"])] == ["seed0.nc", "seed1.nc"]


def test_simulate_refuses_a_seed_given_twice(tmp_path, capsys):
    code, err = run(
        ["simulate", "--scenario", "williams15", "--seeds", "0", "1", "0", "--output-dir", tmp_path / "o"],
        capsys,
    )
    assert code == 2 and "--seeds: seed 0 is given twice" in err
    assert not (tmp_path / "o").exists()


GRID = ["--posterior-dir", "{t}/post", "--scenario-dir", "{t}/scen", "--output-dir", "{t}/q{{q}}_cov{{cov}}"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["evaluate", *GRID, "--q", "1", "10", "1"], "--q: Q 1 is given twice; expected each Q once"),
        (
            ["evaluate", *GRID, "--cov-scales", "0.5", "1", "1.0"],  # 1 and 1.0: one scale
            "--cov-scales: scale 1 is given twice; expected each scale once (one metrics directory each)",
        ),
        (
            ["evaluate", *GRID, "--settings", '{{"q": [10], "cov_scales": [0.5, 0.5], "probe_q": 10}}'],
            "--cov-scales: scale 0.5 is given twice",
        ),
        (
            ["score", "{t}/tracks.csv", "{t}/truth.csv", "-o", "{t}/m.nc", "--q", "5", "5"],
            "--q: Q 5 is given",
        ),
    ],
)
def test_evaluate_and_score_refuse_a_q_or_scale_given_twice(tmp_path, capsys, args, message):
    """Repeated values are a typo: named, never merged into one Q or one scale directory."""
    code, err = run([a.format(t=tmp_path) for a in args], capsys)
    assert code == 2 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_refuse_repeats_names_the_first_repeated_value():
    from nllbench.options import refuse_repeats

    refuse_repeats([0.5, 1, 2], "--cov-scales", "scale")
    refuse_repeats([], "--q", "Q")
    with pytest.raises(ValueError, match=r"^--x: scale 0.25 is given twice; expected each scale once \(y\)$"):
        refuse_repeats([1.0, 0.25, 2.0, 0.25, 1.0], "--x", "scale", " (y)")


# ---------------------------------------------------------------------------------------------
# Section 5: every error names what is wrong


@pytest.mark.parametrize(
    "content, what",
    [
        (b"\x89HDF\r\n\x1a\n" + bytes(100), "got an HDF5 file (NetCDF-4)"),
        (b"CDF\x01" + bytes(100), "got a NetCDF (classic) file"),
        (gzip.compress(b"step,id,x,y,vx,vy\n1,0,1,1,0,0\n"), "got gzip-compressed data"),
        (b"PAR1" + bytes(10), "got a Parquet file"),
        (b"step,id,x,y,vx,vy\n1,0,1,1,0,\x00\n", "got binary data (a NUL byte at byte 28)"),
        (b"step,id,x,y,vx,vy\n1,0,\xe9,1,0,0\n", "got binary data (not UTF-8 text: byte 0xe9"),
    ],
)
def test_simulate_truth_that_is_not_text(tmp_path, capsys, content, what):
    (tmp_path / "run.csv").write_bytes(content)
    code, err = run(
        ["simulate", "--scenario", "williams15", "--truth", tmp_path / "run.csv", "-o", tmp_path / "o.nc"],
        capsys,
    )
    assert code == 2
    assert f"--truth {str(tmp_path / 'run.csv')!r}: expected a text CSV with columns step, id" in err
    assert what in err and "codec" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


def test_simulate_truth_missing_or_too_long(tmp_path, capsys):
    code, err = run(
        ["simulate", "--scenario", "williams15", "--truth", tmp_path / "no.csv", "-o", tmp_path / "o.nc"],
        capsys,
    )
    assert code == 2 and f"--truth {str(tmp_path / 'no.csv')!r}: expected a text CSV" in err
    assert "got no such file" in err
    (tmp_path / "t.csv").write_text("step,id,x,y,vx,vy\n1,0,1,1,0,0\n100000000000,0,1,1,0,0\n")
    code, err = run(
        ["simulate", "--scenario", "williams15", "--truth", tmp_path / "t.csv", "-o", tmp_path / "o.nc"],
        capsys,
    )
    assert code == 2 and "--truth " in err and "line 3, column 'step': expected a step in 1..100000" in err


def test_score_table_that_is_gzip(data, tmp_path, capsys):
    (tmp_path / "tracks.csv").write_bytes(gzip.compress((data / "tracks.csv").read_bytes()))
    code, err = run(
        ["score", tmp_path / "tracks.csv", data / "s.nc", "--existence-one", "-o", tmp_path / "m.nc"], capsys
    )
    assert code == 2
    assert (
        f"TRACKS {str(tmp_path / 'tracks.csv')!r}: expected a text CSV table, got gzip-compressed data" in err
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "100000000000"], "argument --steps: expected an integer in [1, 100000], got '100000000000'"),  # noqa: E501
        (["--steps", "100000", "--seeds", *map(str, range(101))],
         "--seeds: 101 seeds x 100000 steps (--steps) = 10100000 steps to simulate; expected at most 10000000"),  # noqa: E501
        (["--steps", "1000", "--clutter-rate", "1e5", "--seeds", "0"],
         "--clutter-rate: 100000 clutter measurements per step x 1000 steps (--steps) = 1e+08 per run"),
        (["--clutter-rate", "1e9", "--seeds", "0"],
         "--clutter-rate: 1e+09 clutter measurements per step x 81 steps (the williams15 preset's)"),
    ],
)  # fmt: skip
def test_simulate_work_is_bounded_up_front(tmp_path, capsys, args, message):
    code, err = run(["simulate", "--scenario", "williams15", *args, "--output-dir", tmp_path / "o"], capsys)
    assert code == 2 and message in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["evaluate {p} {s}", "score {tr} {s} --existence-one"])
@pytest.mark.parametrize("output", [".", "..", ""])
def test_an_output_that_names_no_file(data, capsys, command, output):
    names = dict(p=data / "p.nc", s=data / "s.nc", tr=data / "tracks.csv")
    code, err = run([*command.format(**names).split(), "-o", output], capsys)
    assert code == 2 and f"-o {output!r}: expected a path that names a file" in err


TOO_BIG = str(2**63)


@pytest.mark.parametrize(
    "command, option",
    [
        ("evaluate {p} {s} -o {x} --q {big}", "--q"),
        ("evaluate {p} {s} -o {x} --q 1 1000001", "--q"),
        ("evaluate --posterior-dir {post} --scenario-dir {sim} --output-dir {x} --cov-scales 1 --probe-q {big}",  # noqa: E501
         "--probe-q"),
        ("score {tr} {s} --existence-one -o {x} --q {big}", "--q"),
        ("score {tr} {s} --existence-one -o {x} --seed {big}", "--seed"),
        ("score {tr} {s} --existence-one -o {x} --frames 0 {big}", "--frames"),
        ("filter --filter cphd {s} -o {x} --cphd-max-card 100000000", "--cphd-max-card"),
        ("filter --filter phd {s} -o {x} --phd-cap {big}", "--phd-cap"),
        ("filter --filter pmbm {s} -o {x} --max-hypotheses {big}", "--max-hypotheses"),
        ("simulate --scenario williams15 -o {x} --seed {big}", "--seed"),
        ("simulate --scenario williams15 -o {x} --truth-seed {big}", "--truth-seed"),
        ("plot q --tables {tab} -o {x} --q {big}", "--q"),
        ("theorem1 --trials {big}", "--trials"),
        ("theorem1 --dim 1000", "--dim"),
        ("theorem1 --max-objects {big}", "--max-objects"),
        ("theorem1 --seed {big}", "--seed"),
    ],
)  # fmt: skip
def test_integer_options_are_bounded_and_named(data, tmp_path, capsys, command, option):
    names = dict(p=data / "p.nc", s=data / "s.nc", tr=data / "tracks.csv", post=data / "post",
                 sim=data / "sim", tab=data / "tab", x=tmp_path / "out.nc", big=TOO_BIG)  # fmt: skip
    code, err = run(command.format(**names).split(), capsys)
    assert code == 2 and f"argument {option}: expected an integer in [" in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_every_integer_option_has_an_upper_bound():
    """2**63 (beyond int64) is refused by every integer option of every command."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    checked = 0
    for p in _all_parsers(sub):
        for a in p._actions:
            if getattr(a.type, "__qualname__", "").startswith("integer."):
                with pytest.raises(argparse.ArgumentTypeError, match="expected an integer in"):
                    a.type(TOO_BIG)
                checked += 1
    assert checked >= 14
    assert MAX_Q == 10**6


def _all_parsers(sub):
    for p in sub.choices.values():
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                yield from _all_parsers(a)


# ---------------------------------------------------------------------------------------------
# Issue 22, section 3: a command line that explains itself


def test_version():
    out = subprocess.run([sys.executable, "-m", "nllbench.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"nllbench {version('nllbench')}"


def test_top_level_help_says_what_nllbench_does():
    text = build_parser().format_help()
    assert "negative log-likelihood (NLL)" in text and "--version" in text
    for command in ("simulate", "filter", "evaluate", "score", "aggregate", "plot", "timing", "theorem1"):
        assert f"    {command}" in text


def test_every_option_has_help_and_shows_its_default():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    formatter = HelpFormatter("nllbench")
    for p in _all_parsers(sub):
        for a in p._actions:
            if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)):
                continue
            assert a.help, f"{p.prog} {a.option_strings or a.dest}: no help line"
            shown = formatter._get_help_string(a)
            has_default = a.option_strings and a.default is not None and a.default is not False
            if has_default or isinstance(a, argparse.BooleanOptionalAction):
                assert "default" in shown, f"{p.prog} {a.option_strings}: default {a.default!r} not shown"


@pytest.mark.parametrize(
    "command, shown",
    [
        ("evaluate", ["--q Q [Q ...]", "(default: 1 10 100)", "(default: 2.0)", "(default: --no-exact)"]),
        ("score", ["(default: 1 10 100)", "(default: x y)", "(default: external)"]),
        ("filter", ["--gate GATE", "(default: 20.0)", "(default: 200)"]),
        ("theorem1", ["number of random (X, Y) pairs (default: 10)", "(default: 0.8)"]),
        ("plot", ["example", "clutter", "decomposition", "reliability", "nees", "cardinality", "timing"]),
        ("simulate", ["williams15_mb", "chalmers", "(default: the preset's)"]),
    ],
)
def test_command_help_text(command, shown, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for s in shown:
        assert " ".join(s.split()) in text


def test_warmup_runs_every_command_of_its_study(capsys):
    """``nllbench warmup`` (the Snakefile's onstart) runs simulate, every filter and the evaluations."""
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("warmup: compiled kernels are cached (") and "CPU s" in out


def test_warmup_names_a_failing_step(tmp_path, monkeypatch):
    from nllbench.cli import warmup

    monkeypatch.setattr(warmup, "FILTERS", ("phd", "nofilter"))
    with pytest.raises(
        RuntimeError, match="warmup: 'nllbench filter -q --filter nofilter .*' failed: .*invalid choice"
    ):
        warmup.warm_up(tmp_path)


@pytest.mark.parametrize(
    "files, message",
    [
        (["{met}/summary.csv"], "(written by --timing), got columns scenario, seed"),
        (["{s}"], "expected a timing CSV with columns item, seconds (written by --timing), got an HDF5 file"),
        (["{t}", "{t}"], "given twice; expected each timing CSV once"),
        (
            ["{met}"],
            "expected a timing CSV with columns item, seconds (written by --timing), got a directory",
        ),
    ],
)
def test_timing_names_a_file_that_is_no_timing_table(data, tmp_path, capsys, files, message):
    names = dict(met=data / "met", s=data / "s.nc", t=data / "t.csv")
    files = [f.format(**names) for f in files]
    code, err = run(["timing", *files, "-o", tmp_path / "all.csv"], capsys)
    assert code == 2 and f"FILES {files[-1]!r}: " in err and message in err, err
    assert list(tmp_path.iterdir()) == []  # refused before the table is written


@pytest.mark.parametrize(
    "command, message",
    [
        (["simulate", "--scenario", "williams15", "--steps", "2", "--seeds", "0", "--output-dir", "{d}", "--timing", "{d}/t.csv"],  # noqa: E501
         "--timing '{d}/t.csv': lies inside the output directory --output-dir '{d}'"),
        (["simulate", "--scenario", "williams15", "-o", ""], "-o '': expected a path that names a file"),
        (["filter", "--filter", "pmb", "--input-dir", "{sim}", "--output-dir", ""],
         "--output-dir '': expected a path that names a directory"),
        (["theorem1", "--size", "1e308", "--dim", "10"],
         "--size 1e+308 with --dim 10: the field of view's volume size^dim overflows"),
        (["simulate", "--scenario", "williams15", "--truth", "{sim}", "-o", "{d}.nc"],
         "--truth '{sim}': expected a text CSV with columns step, id, x, y, vx, vy, got a directory"),
    ],
)  # fmt: skip
def test_more_errors_name_the_option(data, tmp_path, capsys, command, message):
    names = dict(d=tmp_path / "d", sim=data / "sim")
    code, err = run([a.format(**names) for a in command], capsys)
    assert code == 2 and message.format(**names) in err, err
    assert list(tmp_path.iterdir()) == []


def test_simulate_truth_with_a_byte_order_mark(tmp_path):
    """A spreadsheet's UTF-8 CSV starts with a byte-order mark; it is no part of the first column's name."""
    (tmp_path / "t.csv").write_bytes(b"\xef\xbb\xbfstep,id,x,y,vx,vy\n1,0,10,20,1,0\n2,0,11,20,1,0\n")
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--truth",
                str(tmp_path / "t.csv"),
                "-o",
                str(tmp_path / "s.nc"),
            ]
        )
        == 0
    )  # noqa: E501
    truth = read_scenario(tmp_path / "s.nc").truth
    assert len(truth) == 2 and truth[1][0].tolist() == [11.0, 20.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "first, second, found, kind",
    [
        ("simulate", "filter", "scenario files", "posterior files"),
        ("aggregate", "evaluate", "tables", "metrics files"),
        ("evaluate", "aggregate", "metrics files", "tables"),
        ("filter", "simulate", "posterior files", "scenario files"),
    ],
)
def test_a_directory_nllbench_wrote_is_not_replaced_by_outputs_of_another_kind(
    data, tmp_path, capsys, first, second, found, kind
):
    """Scenario, posterior, metrics and table directories each record what they hold."""
    out = tmp_path / "out"
    commands = {
        "simulate": ["simulate", "--scenario", "williams15", "--steps", "2", "--seeds", "0", "--output-dir", out],  # noqa: E501
        "filter": ["filter", "-q", "--filter", "pmb", "--input-dir", data / "sim", "--output-dir", out],
        "evaluate": ["evaluate", "--posterior-dir", data / "post", "--scenario-dir", data / "sim", "--q", "1", "--output-dir", out],  # noqa: E501
        "aggregate": ["aggregate", data / "met", "--out-dir", out],
    }  # fmt: skip
    assert run(commands[first], capsys)[0] == 0
    before = snapshot(out)
    code, err = run(commands[second], capsys)
    assert code == 2
    assert f"'{out}': refusing to replace a directory of {found} (written by nllbench) with {kind}" in err
    assert snapshot(out) == before
    assert run(commands[first], capsys)[0] == 0  # the same kind is replaced


def test_a_metrics_directory_takes_score_or_evaluate_and_old_markers_are_replaced(data, tmp_path, capsys):
    import json

    from nllbench.store import MARKER

    out = tmp_path / "m"
    ev = ["evaluate", "--posterior-dir", data / "post", "--scenario-dir", data / "sim", "--q", "1"]
    assert run([*ev, "--output-dir", out], capsys)[0] == 0
    assert json.loads((out / MARKER).read_text())["holds"] == "metrics files"
    sc = ["score", "--tracks-dir", data / "tracks", "--scenario-dir", data / "sim", "--existence-one"]
    assert run([*sc, "--default-std", "1", "--q", "1", "--output-dir", out], capsys)[0] == 0
    (out / MARKER).write_text('{"written_by": "nllbench", "option": "--output-dir"}')  # before "holds"
    assert run(["aggregate", data / "met", "--out-dir", out], capsys)[0] == 0
    assert json.loads((out / MARKER).read_text())["holds"] == "tables"  # not the inner writer's


@pytest.mark.parametrize(
    "command, message",
    [
        (["leaderboard", "--tables", "{root}/none", "-o", "{out}"],
         "--tables '{root}/none': expected the tables written by 'nllbench aggregate', got no such dir"),
        (["leaderboard", "--tables", "{sim}", "-o", "{out}"],
         "--tables '{sim}': expected the tables written by 'nllbench aggregate', but summary.csv is missing"),
        (["leaderboard", "--tables", "{tab}", "--example-dirs", "{sim}", "-o", "{out}"],
         "--example-dirs '{sim}': expected a directory written by 'nllbench example N --out-dir', but"),
        (["leaderboard", "--tables", "{tab}", "--theorem1", "{root}/t.txt", "-o", "{out}"],
         "--theorem1 '{root}/t.txt': expected a file, got no such file"),
        (["plot", "example", "--example-dir", "{root}/none", "-o", "{out}"],
         "--example-dir '{root}/none': expected a directory written by 'nllbench example N --out-dir'"),
        (["plot", "timing", "--timing", "{s}", "-o", "{out}"],
         "--timing '{s}': expected a timing table from 'nllbench timing' (CSV), got an HDF5 file"),
        (["plot", "theorem1", "--tables", "{met}", "-o", "{out}"],
         "--tables '{met}': expected the tables written by 'nllbench aggregate', but steps.nc is missing"),
    ],
)  # fmt: skip
def test_commands_that_read_a_directory_name_what_is_missing(data, tmp_path, capsys, command, message):
    names = dict(root=tmp_path, out=tmp_path / "o" / "x.png", sim=data / "sim", tab=data / "tab",
                 s=data / "s.nc", met=data / "met")  # fmt: skip
    code, err = run([a.format(**names) for a in command], capsys)
    assert code == 2 and message.format(**names) in err, err
    assert list(tmp_path.iterdir()) == []
