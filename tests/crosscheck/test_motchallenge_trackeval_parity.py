"""MOTChallenge files scored by ``nllbench score`` equal TrackEval 1.3.0's HOTA, CLEAR and Identity.

TrackEval (the MOTChallenge benchmark's evaluation) runs in-process on the same
files in its own folder layout. The files exercise each preprocessing rule
of ``datasets/mot_challenge_2d_box.py``: tracker boxes matched to distractor
classes (2, 7, 8, 12) removed, a box matched below IoU 0.5 kept, a box
matched to a zero-marked pedestrian or to a non-distractor class (car,
occluder, crowd) kept as a false positive, non-pedestrian and zero-marked
ground truth dropped; and identity switches, fragments, frames without
tracks or truth, a sequence without tracks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nllbench.cli import main
from nllbench.measures.boxes import COUNT_FIELDS, FLOAT_FIELDS, HOTA_ARRAYS, HOTA_COUNTS, box_iou
from nllbench.store.boxes import read_box_measures

trackeval = pytest.importorskip("trackeval")

CLASSES = [1, 1, 1, 1, 1, 2, 7, 8, 12, 3, 9, 13]


def synthetic_sequence(seed: int, frames: int = 40, objects: int = 9, silent: bool = False):
    """(ground-truth lines, tracker lines) of a random sequence exercising the preprocessing rules."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 400, (objects, 2))
    velocity = rng.normal(0, 3, (objects, 2))
    size = rng.uniform(20, 60, (objects, 2))
    classes = np.resize(CLASSES, objects)  # every class once objects >= 12
    gt, tr = [], []
    next_id = 100
    track_of = {i: i + 1 for i in range(objects)}
    for t in range(1, frames + 1):
        if t == frames // 2:  # a frame with tracks but no truth
            tr.append(f"{t},{next_id},5,5,10,10,0.3,-1,-1,-1")
            continue
        for i in range(objects):
            if rng.random() < 0.1:
                continue
            x, y = start[i] + t * velocity[i]
            w, h = size[i]
            flag = 0 if rng.random() < 0.1 else 1
            gt.append(f"{t},{i + 1},{x:.2f},{y:.2f},{w:.2f},{h:.2f},{flag},{classes[i]},1")
            if silent or rng.random() < 0.2:
                continue
            if rng.random() < 0.03:  # an identity switch
                next_id += 1
                track_of[i] = next_id
            jitter = rng.normal(0, 0.12 * min(w, h), 2)
            tw, th = w * rng.uniform(0.8, 1.2), h * rng.uniform(0.8, 1.2)
            conf = rng.uniform(0, 1)
            box = f"{x + jitter[0]:.2f},{y + jitter[1]:.2f},{tw:.2f},{th:.2f}"
            tr.append(f"{t},{track_of[i]},{box},{conf:.3f},-1,-1,-1")
        if not silent and rng.random() < 0.5:  # a false track
            fx, fy = rng.uniform(0, 400, 2)
            tr.append(f"{t},{900 + t % 3},{fx:.2f},{fy:.2f},30,50,{rng.uniform(0, 1):.3f},-1,-1,-1")
    return gt, tr


def write_sequences(root, sequences: dict):
    """MOTChallenge files for nllbench (res/<SEQ>.txt, gt/<SEQ>/gt/gt.txt) and TrackEval (its layout)."""
    res, gt = root / "res", root / "gt"
    for name, (g, t) in sequences.items():
        (gt / name / "gt").mkdir(parents=True)
        (gt / name / "gt" / "gt.txt").write_text("\n".join(g) + "\n")
        res.mkdir(exist_ok=True)
        (res / f"{name}.txt").write_text("\n".join(t) + ("\n" if t else ""))
        data = root / "te_tr" / "T" / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / f"{name}.txt").write_text("\n".join(t) + ("\n" if t else ""))
    return res, gt


def trackeval_results(root, lengths: dict) -> dict:
    """TrackEval's HOTA, CLEAR and Identity fields per sequence and COMBINED_SEQ (run in-process)."""
    config = trackeval.Evaluator.get_default_eval_config()
    config.update(
        PRINT_RESULTS=False,
        PRINT_CONFIG=False,
        TIME_PROGRESS=False,
        OUTPUT_SUMMARY=False,
        OUTPUT_DETAILED=False,
        PLOT_CURVES=False,
        DISPLAY_LESS_PROGRESS=True,
        USE_PARALLEL=False,
    )
    data = trackeval.datasets.MotChallenge2DBox.get_default_dataset_config()
    data.update(
        GT_FOLDER=str(root / "gt"),
        TRACKERS_FOLDER=str(root / "te_tr"),
        TRACKERS_TO_EVAL=["T"],
        SEQ_INFO=dict(lengths),
        GT_LOC_FORMAT="{gt_folder}/{seq}/gt/gt.txt",
        SKIP_SPLIT_FOL=True,
        PRINT_CONFIG=False,
    )
    metrics = [m({"PRINT_CONFIG": False}) for m in (trackeval.metrics.HOTA, trackeval.metrics.CLEAR)]
    metrics.append(trackeval.metrics.Identity({"PRINT_CONFIG": False}))
    res, _ = trackeval.Evaluator(config).evaluate([trackeval.datasets.MotChallenge2DBox(data)], metrics)
    out = res["MotChallenge2DBox"]["T"]
    return {
        seq: {k: v for m in ("HOTA", "CLEAR", "Identity") for k, v in r["pedestrian"][m].items()}
        for seq, r in out.items()
    }


def assert_parity(ours: dict, ref: dict, tol: float = 1e-12) -> float:
    """Every reported field of every sequence and of the combined result within ``tol``; the largest gap."""
    worst = 0.0
    for seq, fields in ref.items():
        mine = ours["COMBINED" if seq == "COMBINED_SEQ" else seq]
        for field in (*FLOAT_FIELDS, *COUNT_FIELDS):
            if field in HOTA_COUNTS:
                continue
            value = np.mean(fields[field]) if field in HOTA_ARRAYS else fields[field]
            gap = abs(float(mine[field]) - float(value))
            assert gap <= tol, (seq, field, mine[field], value)
            worst = max(worst, gap)
        for field in (*HOTA_ARRAYS, *HOTA_COUNTS):
            gap = float(np.max(np.abs(np.asarray(mine[f"{field}_alpha"]) - fields[field])))
            assert gap <= tol, (seq, field)
            worst = max(worst, gap)
    return worst


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Four sequences (one with a single false track, one with an empty result file) scored by one command
    and by TrackEval."""
    root = tmp_path_factory.mktemp("parity")
    frames = 40
    sequences = {
        "SEQ-01": synthetic_sequence(1, frames),
        "SEQ-02": synthetic_sequence(2, frames, objects=14),
        "SEQ-03": synthetic_sequence(3, frames, silent=True),
        "SEQ-04": (synthetic_sequence(4, frames)[0], []),  # an empty result file
    }
    res, gt = write_sequences(root, sequences)
    out = root / "out"
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out)]
    assert main([*args, "--frames", "union"]) == 0  # conf is a score: no NLL, the classic measures
    lengths = dict.fromkeys(sequences, frames)
    return root, out, trackeval_results(root, lengths)


def test_every_field_per_sequence_and_combined_equals_trackeval(scored):
    _, out, ref = scored
    ours = read_box_measures(out / "motchallenge.nc")
    assert list(ours) == ["SEQ-01", "SEQ-02", "SEQ-03", "SEQ-04", "COMBINED"]
    assert assert_parity(ours, ref) <= 1e-12
    summary = pd.read_csv(out / "summary.csv")
    assert summary.sequence.tolist() == ["SEQ-01", "SEQ-02", "SEQ-03", "SEQ-04", "COMBINED"]
    combined = summary.iloc[-1]
    for ours_name, te_name in (("hota", "HOTA"), ("mota", "MOTA"), ("idf1", "IDF1"), ("deta", "DetA")):
        value = np.mean(ref["COMBINED_SEQ"][te_name])
        assert abs(float(combined[ours_name]) - value) <= 1e-12
    assert int(combined["CLR_TP"]) == int(ref["COMBINED_SEQ"]["CLR_TP"])


def test_the_files_exercise_each_preprocessing_rule(scored):
    """The parity is not vacuous: distractor matches were removed, and the other rules met."""
    from nllbench.trackers.motchallenge import read_mot_pair

    root, _, ref = scored
    pair = read_mot_pair(root / "res" / "SEQ-02.txt", root / "gt" / "SEQ-02" / "gt" / "gt.txt")
    assert pair.removed_tracks > 0 and pair.dropped_truth > 0
    assert ref["SEQ-02"]["IDSW"] > 0 and ref["SEQ-02"]["Frag"] > 0
    assert ref["SEQ-03"]["CLR_TP"] == 0  # one false track only
    assert ref["SEQ-04"]["CLR_FP"] == 0 and ref["SEQ-04"]["CLR_FN"] > 0  # an empty result file
    gt = pd.read_csv(root / "gt" / "SEQ-02" / "gt" / "gt.txt", header=None)
    assert {2, 7, 8, 12, 3}.issubset(set(gt[7])) and (gt[6] == 0).any()


def test_the_nll_comes_with_the_classic_measures_once_calibrated(scored, tmp_path):
    """With a score calibration and box covariances the metrics files carry TrackEval's MOTA and the NLL."""
    import xarray as xr

    root, out, ref = scored
    res, gt = root / "res", root / "gt"
    out2 = tmp_path / "nll"
    calibration = [str(res / "SEQ-01.txt"), str(gt / "SEQ-01" / "gt" / "gt.txt")]
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out2)]
    args += ["--frames", "union", "--fit-score-on", *calibration, "--mot-box-std-fraction", "0.2"]
    args += [
        "--undetected-rate",
        "1",
        "--fov",
        "-200",
        "-200",
        "800",
        "800",
        "--q",
        "1",
        "--no-proper-scores",
    ]
    args += ["--threshold", "20", "--cutoff", "20"]
    assert main(args) == 0
    with xr.open_dataset(out2 / "SEQ-01.nc") as ds:
        assert abs(float(ds["mota"]) - ref["SEQ-01"]["MOTA"]) <= 1e-12
        assert abs(float(ds["idf1"]) - ref["SEQ-01"]["IDF1"]) <= 1e-12
        assert abs(float(ds["hota"]) - np.mean(ref["SEQ-01"]["HOTA"])) <= 1e-12
        assert np.isfinite(ds["nll_value"].values).all()
        assert ds["hota_tp"].dtype.itemsize >= 4  # counts that a sum cannot wrap
    combined = pd.read_csv(out2 / "summary.csv").iloc[-1]
    assert abs(float(combined["mota"]) - ref["COMBINED_SEQ"]["MOTA"]) <= 1e-12
    assert np.isfinite(float(combined["nll_q1"]))


def test_box_iou_equals_trackeval():
    rng = np.random.default_rng(0)
    a = np.abs(rng.normal(10, 5, (7, 4)))
    b = np.abs(rng.normal(10, 5, (5, 4)))
    b[0, 2] = 0.0  # an empty box
    ref = trackeval.datasets._base_dataset._BaseDataset._calculate_box_ious(a, b, box_format="xywh")
    np.testing.assert_array_equal(box_iou(a, b), ref)


def test_a_tracker_class_above_one_is_refused_naming_the_line(tmp_path):
    from nllbench.trackers.motchallenge import read_mot_pair

    (tmp_path / "gt.txt").write_text("1,1,0,0,10,10,1,1,1\n")
    (tmp_path / "tr.txt").write_text("1,1,0,0,10,10,0.5,-1,-1,-1\n1,2,0,0,10,10,0.5,3,-1,-1\n")
    with pytest.raises(ValueError, match="tr.txt: line 2, column 8 \\(class\\)"):
        read_mot_pair(tmp_path / "tr.txt", tmp_path / "gt.txt")


def test_the_fast_reader_gives_python_floats_bit_for_bit(tmp_path):
    """A well-formed file goes through pandas' C parser: the same floats as float() on each cell."""
    from nllbench.trackers.adapters import read_mot_rows

    rng = np.random.default_rng(0)
    values = rng.normal(0, 1e3, (3000, 10)) * 10.0 ** rng.integers(-8, 8, (3000, 10))
    values[:, 0], values[:, 1] = np.arange(1, 3001), 1.0
    values[:, 4:6] = np.abs(values[:, 4:6]) + 1.0
    path = tmp_path / "f.txt"
    path.write_text("\n".join(",".join(repr(float(v)) for v in row) for row in values) + "\n\n")
    raw = read_mot_rows(path)
    np.testing.assert_array_equal(raw.to_numpy(dtype=float), values)
    assert raw.attrs["lines"].tolist() == list(range(1, 3001))


def test_jobs_give_the_files_of_one_job(scored, tmp_path):
    """--jobs 2 (worker processes) writes the same files, byte for byte, as --jobs 1."""
    root = scored[0]
    outs = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        args = ["score", "--tracks-dir", str(root / "res"), "--scenario-dir", str(root / "gt")]
        args += ["--output-dir", str(out), "--frames", "union", "--mot-conf", "r", "--existence-one"]
        args += ["--mot-box-std-fraction", "0.2", "--q", "1", "--no-proper-scores", "--jobs", str(jobs)]
        assert main(args) == 0
        outs[jobs] = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}
    assert list(outs[1]) == [
        "SEQ-01.nc",
        "SEQ-02.nc",
        "SEQ-03.nc",
        "SEQ-04.nc",
        "motchallenge.nc",
        "summary.csv",
    ]
    assert outs[1] == outs[2]
