"""Scenario presets and the simulation of truth and measurements.

Presets carry the community's parameters (see ``docs/reference.md``):

``williams15``
    Williams 2015 / Garcia-Fernandez et al. reference code: 300 x 300 field of
    view, P_D 0.9, 10 clutter per scan, P_S 0.99, CV with process noise
    0.02 [T^3/3 T^2/2; T^2/2 T] per axis, R = I, Poisson birth of weight 0.005
    at (100, 100, 0, 0) with std (150, 150, 1, 1), initial PPP of rate 3,
    81 steps. Four objects are drawn at step 41 around (150, 150, 0, 0) with
    covariance 0.1 I and simulated forward and backward, so they coalesce at
    the midpoint; object 1 exists at steps 1-40 only. As in the reference
    code, the truth is drawn once (``truth_seed``) and only the measurements
    change between Monte Carlo runs.
``williams15_mb``
    The MBM scenario file of the same reference code: ``williams15`` with
    process noise 0.01 and a multi-Bernoulli birth of four Bernoullis with
    r = 0.005 at (120, 170, 0, 0), (140, 140, 0, 0), (170, 150, 0, 0) and
    (135, 160, 0, 0), covariance diag(10, 10, 1, 1)^2; the MBM filters start
    from these four Bernoullis (``Model.initial_r``), with no PPP. Filters
    with a Poisson birth read the same four components with weight 0.005.
``chalmers``
    Chalmers MOT course: [-1000, 1000]^2, P_D 0.98, 10 clutter, P_S 0.99,
    CV with sigma_q = 5, sigma_r = 10, four birth Gaussians of weight 0.03 and
    covariance 400 I at (0, 0), (400, -600), (-800, -200), (-200, 800),
    100 steps, 12 objects born at those locations on a fixed schedule
    (nllbench's own schedule; the course's exact one is not reproduced).

Steps are indexed 0..K-1 in arrays (step k in the text is index k - 1).
Measurements that fall outside the field of view are discarded (the sensor
sees only its field of view; clutter is uniform over it).
"""

from __future__ import annotations

import csv
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.options import MAX_STEPS
from nllbench.simulation.models import POSITION_H, Model, cv_matrices


@dataclass(frozen=True)
class TruthPlan:
    """How the ground truth is drawn: one row per object.

    Each object's state is drawn at ``anchor`` from N(anchor_mean, anchor_cov)
    and simulated with the motion model forward to ``died - 1`` and backward
    to ``born``.

    Attributes
    ----------
    born, died, anchor : (N,) int
        First step, first step no longer present, and anchor step.
    anchor_mean : (N, 4)
    anchor_cov : (N, 4, 4)
    noise_scale : float
        The truth's process noise is ``noise_scale * Q`` (1: the filters'
        model; smaller: smoother trajectories that stay in the field of view).
    """

    born: np.ndarray
    died: np.ndarray
    anchor: np.ndarray
    anchor_mean: np.ndarray
    anchor_cov: np.ndarray
    noise_scale: float = 1.0


@dataclass(frozen=True)
class Scenario:
    """A named scenario: model, length, truth plan and truth seed.

    ``truth_seed`` fixes the truth across Monte Carlo runs (None: drawn from
    the run's generator); ``truth_source`` names a truth read from a file.
    """

    name: str
    steps: int
    model: Model
    truth_plan: TruthPlan
    truth_seed: int | None
    process_noise: float
    measurement_noise: float
    truth_source: str = ""

    def parameters(self) -> dict:
        """Flat, NetCDF-attribute-friendly parameters."""
        m = self.model
        return {
            "scenario": self.name,
            "steps": self.steps,
            "p_detection": m.p_detection,
            "p_survival": m.p_survival,
            "clutter_rate": m.clutter_rate,
            "process_noise": self.process_noise,
            "measurement_noise": self.measurement_noise,
            "fov_low": m.fov_low.tolist(),
            "fov_high": m.fov_high.tolist(),
            "truth_seed": -1 if self.truth_seed is None else self.truth_seed,
            **({"truth_source": self.truth_source} if self.truth_source else {}),
        }


def _williams15() -> Scenario:
    q = 0.02
    F, Q = cv_matrices(1.0, q)
    birth_cov = np.diag([150.0, 150.0, 1.0, 1.0]) ** 2
    birth = GaussianMixture([0.005], [[100.0, 100.0, 0.0, 0.0]], [birth_cov])
    model = Model(
        F=F,
        Q=Q,
        H=POSITION_H,
        R=np.eye(2),
        p_survival=0.99,
        p_detection=0.9,
        clutter_rate=10.0,
        fov_low=[0.0, 0.0],
        fov_high=[300.0, 300.0],
        birth=birth,
        birth_r=[0.005],
        initial=GaussianMixture([3.0], [[100.0, 100.0, 0.0, 0.0]], [birth_cov]),
    )
    N, K, mid = 4, 81, 40
    plan = TruthPlan(
        born=np.zeros(N, dtype=int),
        died=np.array([mid, K, K, K]),
        anchor=np.full(N, mid - 1),
        anchor_mean=np.tile([150.0, 150.0, 0.0, 0.0], (N, 1)),
        anchor_cov=np.tile(0.1 * np.eye(4), (N, 1, 1)),
    )
    return Scenario("williams15", K, model, plan, 0, q, 1.0)


WILLIAMS15_MB_BIRTH = np.array(
    [[120.0, 170.0, 0.0, 0.0], [140.0, 140.0, 0.0, 0.0], [170.0, 150.0, 0.0, 0.0], [135.0, 160.0, 0.0, 0.0]]
)


def _williams15_mb() -> Scenario:
    base = _williams15()
    q = 0.01
    F, Q = cv_matrices(1.0, q)
    B = WILLIAMS15_MB_BIRTH.shape[0]
    r = np.full(B, 0.005)
    covs = np.tile(np.diag([10.0, 10.0, 1.0, 1.0]) ** 2, (B, 1, 1))
    birth = GaussianMixture(r, WILLIAMS15_MB_BIRTH, covs)
    model = base.model.replace(F=F, Q=Q, birth=birth, birth_r=r, initial=birth, initial_r=r)
    return dataclasses.replace(base, name="williams15_mb", model=model, process_noise=q)


CHALMERS_BIRTH_LOCATIONS = np.array([[0.0, 0.0], [400.0, -600.0], [-800.0, -200.0], [-200.0, 800.0]])


def _chalmers() -> Scenario:
    sigma_q, sigma_r = 5.0, 10.0
    F, Q = cv_matrices(1.0, sigma_q**2)
    B = len(CHALMERS_BIRTH_LOCATIONS)
    means = np.concatenate([CHALMERS_BIRTH_LOCATIONS, np.zeros((B, 2))], axis=1)
    birth = GaussianMixture(np.full(B, 0.03), means, np.tile(400.0 * np.eye(4), (B, 1, 1)))
    model = Model(
        F=F,
        Q=Q,
        H=POSITION_H,
        R=sigma_r**2 * np.eye(2),
        p_survival=0.99,
        p_detection=0.98,
        clutter_rate=10.0,
        fov_low=[-1000.0, -1000.0],
        fov_high=[1000.0, 1000.0],
        birth=birth,
        birth_r=np.full(B, 0.03),
        initial=GaussianMixture(np.full(B, 0.03), means, np.tile(400.0 * np.eye(4), (B, 1, 1))),
    )
    born = np.array([0, 0, 0, 9, 9, 19, 19, 29, 39, 39, 49, 59])
    died = np.array([69, 100, 100, 89, 100, 100, 79, 100, 100, 89, 100, 100])
    loc = np.arange(12) % B
    anchor_mean = np.concatenate([CHALMERS_BIRTH_LOCATIONS[loc], np.zeros((12, 2))], axis=1)
    # velocities point roughly inwards so that objects cross the scene
    anchor_mean[:, 2:] = -np.sign(anchor_mean[:, :2] + 1e-9) * 6.0
    anchor_cov = np.tile(np.diag([25.0, 25.0, 9.0, 9.0]), (12, 1, 1))
    # smooth truth (1% of the filters' process noise) so that objects stay in view
    plan = TruthPlan(born, died, born.copy(), anchor_mean, anchor_cov, noise_scale=0.01)
    return Scenario("chalmers", 100, model, plan, 1, sigma_q**2, sigma_r)


PRESETS = {"williams15": _williams15, "williams15_mb": _williams15_mb, "chalmers": _chalmers}

OVERRIDABLE = (
    "clutter_rate",
    "p_detection",
    "p_survival",
    "steps",
    "process_noise",
    "measurement_noise",
    "truth_seed",
    "mb_birth",
    "mb_start",
)


def mb_birth_mixture(entries) -> tuple[GaussianMixture, np.ndarray]:
    """A multi-Bernoulli birth from a list of ``{"r": r, "mean": [4], "cov": [[4 x 4]]}``.

    ``"std": [4]`` (a diagonal covariance diag(std)^2) may replace ``"cov"``;
    states are (x, y, vx, vy). Returns the birth mixture (weights r) and r.
    """
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ValueError(f"mb_birth: expected a non-empty list of Bernoullis, got {entries!r}")
    r, means, covs = [], [], []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise TypeError(f"mb_birth[{i}]: expected a mapping with r, mean and cov (or std), got {e!r}")
        keys = set(e)
        shape_keys = keys & {"cov", "std"}
        if (
            "r" not in keys
            or "mean" not in keys
            or len(shape_keys) != 1
            or keys - {"r", "mean", "cov", "std"}
        ):
            raise ValueError(f"mb_birth[{i}]: expected keys r, mean and one of cov, std, got {sorted(keys)}")
        try:
            mean = np.asarray(e["mean"], dtype=float)
            cov = (
                np.diag(np.asarray(e["std"], dtype=float) ** 2)
                if "std" in e
                else np.asarray(e["cov"], dtype=float)
            )
            ri = float(e["r"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"mb_birth[{i}]: expected numbers: {exc}") from None
        if mean.shape != (4,) or cov.shape != (4, 4):
            raise ValueError(
                f"mb_birth[{i}]: expected a mean of 4 and a 4 x 4 covariance (or 4 std), "
                f"got shapes {mean.shape} and {cov.shape}"
            )
        r.append(ri)
        means.append(mean)
        covs.append(cov)
    try:
        birth = GaussianMixture(np.array(r), np.array(means), np.array(covs))
    except ValueError as exc:
        raise ValueError(f"mb_birth: {exc}") from None
    return birth, birth.weights.copy()


def get_scenario(name: str, **overrides) -> Scenario:
    """A preset with parameters overridden.

    Overridable: clutter_rate, p_detection, p_survival, steps (truncates or
    extends the run; objects alive at the end stay alive), process_noise
    (q of the CV model), measurement_noise (std of each position
    coordinate), truth_seed (None draws the truth from the run's generator),
    mb_birth (a multi-Bernoulli birth, see :func:`mb_birth_mixture`; it is
    also the Poisson birth of the filters that have one), mb_start (True:
    the MBM filters start from the birth Bernoullis, with no PPP).
    ``None`` values for other keys are ignored.
    """
    if name not in PRESETS:
        raise ValueError(f"scenario: expected one of {sorted(PRESETS)}, got {name!r}")
    unknown = set(overrides) - set(OVERRIDABLE)
    if unknown:
        raise ValueError(
            f"{sorted(unknown)[0]}: not an overridable scenario parameter; expected one of {OVERRIDABLE}"
        )
    sc = PRESETS[name]()
    model_changes = {}
    for key in ("clutter_rate", "p_detection", "p_survival"):
        if overrides.get(key) is not None:
            model_changes[key] = overrides[key]
    steps = sc.steps
    if overrides.get("steps") is not None:
        steps = int(overrides["steps"])
        if not 1 <= steps <= MAX_STEPS:
            raise ValueError(f"steps: expected an integer in [1, {MAX_STEPS}], got {overrides['steps']!r}")
    q = sc.process_noise
    if overrides.get("process_noise") is not None:
        q = float(overrides["process_noise"])
        if not q > 0:
            raise ValueError(f"process_noise: expected a positive number, got {overrides['process_noise']!r}")
        model_changes["F"], model_changes["Q"] = cv_matrices(1.0, q)
    sr = sc.measurement_noise
    if overrides.get("measurement_noise") is not None:
        sr = float(overrides["measurement_noise"])
        if not sr > 0:
            raise ValueError(
                f"measurement_noise: expected a positive number, got {overrides['measurement_noise']!r}"
            )
        model_changes["R"] = sr**2 * np.eye(2)
    if overrides.get("mb_birth") is not None:
        birth, birth_r = mb_birth_mixture(overrides["mb_birth"])
        model_changes["birth"], model_changes["birth_r"] = birth, birth_r
    if overrides.get("mb_start") is not None:
        if not isinstance(overrides["mb_start"], (bool, np.bool_)):
            raise TypeError(f"mb_start: expected a bool, got {overrides['mb_start']!r}")
        if overrides["mb_start"]:
            start = model_changes.get("birth", sc.model.birth)
            model_changes["initial"] = start
            model_changes["initial_r"] = model_changes.get("birth_r", sc.model.birth_r)
        else:
            model_changes["initial_r"] = None
    model = sc.model.replace(**model_changes) if model_changes else sc.model
    plan = sc.truth_plan
    if steps != sc.steps:
        died = np.where(plan.died >= sc.steps, steps, np.minimum(plan.died, steps))
        keep = plan.born < steps
        anchor = np.minimum(plan.anchor, np.maximum(died - 1, plan.born))
        plan = TruthPlan(
            plan.born[keep],
            died[keep],
            anchor[keep],
            plan.anchor_mean[keep],
            plan.anchor_cov[keep],
            plan.noise_scale,
        )
    truth_seed = overrides["truth_seed"] if "truth_seed" in overrides else sc.truth_seed
    return dataclasses.replace(
        sc,
        steps=steps,
        model=model,
        truth_plan=plan,
        truth_seed=truth_seed,
        process_noise=q,
        measurement_noise=sr,
    )


@dataclass(frozen=True)
class Simulation:
    """Simulated truth and measurements of a scenario.

    Attributes
    ----------
    scenario : Scenario
    seed : int
        Seed of the run's generator (recorded for provenance; -1 if unknown).
    truth : list of (n_k, 4) arrays, one per step
    truth_ids : list of (n_k,) int arrays (object index in the truth plan)
    measurements : list of (z_k, 2) arrays
    origins : list of (z_k,) int arrays: truth id, or -1 for clutter
    """

    scenario: Scenario
    seed: int
    truth: list[np.ndarray]
    truth_ids: list[np.ndarray]
    measurements: list[np.ndarray]
    origins: list[np.ndarray]


def simulate_truth(scenario: Scenario, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Truth states and ids per step (see :class:`TruthPlan`)."""
    m = scenario.model
    K = scenario.steps
    plan = scenario.truth_plan
    F_inv = np.linalg.inv(m.F)
    Q = plan.noise_scale * m.Q
    states = [[] for _ in range(K)]
    ids = [[] for _ in range(K)]
    for i in range(plan.born.shape[0]):
        x = rng.multivariate_normal(plan.anchor_mean[i], plan.anchor_cov[i])
        traj = {int(plan.anchor[i]): x}
        xk = x
        for k in range(int(plan.anchor[i]) + 1, int(plan.died[i])):
            xk = m.F @ xk + rng.multivariate_normal(np.zeros(4), Q)
            traj[k] = xk
        xk = x
        for k in range(int(plan.anchor[i]) - 1, int(plan.born[i]) - 1, -1):
            xk = F_inv @ (xk - rng.multivariate_normal(np.zeros(4), Q))
            traj[k] = xk
        for k, s in traj.items():
            if 0 <= k < K and plan.born[i] <= k < plan.died[i]:
                states[k].append(s)
                ids[k].append(i)
    return (
        [np.array(s).reshape(-1, 4) for s in states],
        [np.array(t, dtype=np.int64) for t in ids],
    )


def simulate_measurements(
    model: Model, truth: list[np.ndarray], truth_ids: list[np.ndarray], rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Detections (prob. P_D, noise R) plus Poisson clutter uniform over the field of view."""
    meas, origins = [], []
    for X, ids in zip(truth, truth_ids, strict=True):
        detected = rng.random(X.shape[0]) < model.p_detection
        Z = X[detected] @ model.H.T + rng.multivariate_normal(np.zeros(2), model.R, size=int(detected.sum()))
        org = ids[detected]
        inside = np.all((Z >= model.fov_low) & (Z <= model.fov_high), axis=1)
        Z, org = Z[inside], org[inside]
        n_clutter = rng.poisson(model.clutter_rate)
        C = rng.uniform(model.fov_low, model.fov_high, (n_clutter, 2))
        allz = np.concatenate([Z, C])
        allo = np.concatenate([org, np.full(n_clutter, -1, dtype=np.int64)])
        perm = rng.permutation(allz.shape[0])  # the filter must not see the order
        meas.append(allz[perm])
        origins.append(allo[perm])
    return meas, origins


def simulate(scenario: Scenario, rng: np.random.Generator, seed: int = -1) -> Simulation:
    """Simulate a scenario. The same generator state gives identical output.

    The truth comes from ``numpy.random.default_rng(scenario.truth_seed)``
    when ``truth_seed`` is set (fixed truth across runs), otherwise from ``rng``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    truth_rng = rng if scenario.truth_seed is None else np.random.default_rng(scenario.truth_seed)
    truth, ids = simulate_truth(scenario, truth_rng)
    meas, origins = simulate_measurements(scenario.model, truth, ids, rng)
    return Simulation(scenario, seed, truth, ids, meas, origins)


TRUTH_KEY_COLUMNS = ("step", "id")


def _truth_field(path, line: int, column: str, text: str, kind: str):
    """One parsed CSV field: 'step' (integer >= 1), 'id' (integer >= 0) or a finite number."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if kind == "number":
        if not math.isfinite(value):
            raise ValueError(
                f"{path}, line {line}, column {column!r}: expected a finite number, got {text!r}"
            )
        return value
    low = 1 if kind == "step" else 0
    if not (math.isfinite(value) and value.is_integer() and value >= low):
        raise ValueError(
            f"{path}, line {line}, column {column!r}: expected an integer >= {low}, got {text!r}"
        )
    return int(value)


def read_truth_csv(
    path, steps: int | None = None, state_names: tuple[str, ...] = ("x", "y", "vx", "vy")
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Ground truth from a CSV file: columns ``step, id`` and the state components by name.

    Steps are numbered from 1 (step k is array index k - 1); ``id`` is a
    non-negative integer identity, stable over time; columns may come in any
    order. ``steps`` is the run length (None: the last step in the file, at
    most :data:`nllbench.options.MAX_STEPS`).
    Every bad field, missing or unknown column, duplicate (step, id) or step
    beyond ``steps`` is a ValueError naming the file, line and column.

    Returns per-step states (n_k, 4) in ``state_names`` order and ids (n_k,),
    rows of a step sorted by id.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:  # a byte-order mark is no part of a name
        rows = list(csv.reader(fh))
    if not rows or not any(f.strip() for f in rows[0]):
        raise ValueError(
            f"{path}: expected a header line (step, id, {', '.join(state_names)}); the file is empty"
        )
    header = [h.strip() for h in rows[0]]
    expected = TRUTH_KEY_COLUMNS + tuple(state_names)
    for j, name in enumerate(header):
        if name not in expected:
            raise ValueError(
                f"{path}, line 1, column {j + 1}: unknown column {name!r}; expected {list(expected)}"
            )
        if header.index(name) != j:
            raise ValueError(f"{path}, line 1, column {j + 1}: column {name!r} appears twice")
    missing = [c for c in expected if c not in header]
    if missing:
        raise ValueError(f"{path}, line 1: column {missing[0]!r} is missing; expected {list(expected)}")
    col = {name: header.index(name) for name in expected}
    last = MAX_STEPS if steps is None else steps
    records: dict[tuple[int, int], tuple[int, list[float]]] = {}
    for line, fields in enumerate(rows[1:], start=2):
        if not fields or all(not f.strip() for f in fields):
            continue  # blank lines carry nothing
        if len(fields) != len(header):
            raise ValueError(
                f"{path}, line {line}: expected {len(header)} fields like the header, got {len(fields)}"
            )
        k = _truth_field(path, line, "step", fields[col["step"]].strip(), "step")
        i = _truth_field(path, line, "id", fields[col["id"]].strip(), "id")
        x = [_truth_field(path, line, c, fields[col[c]].strip(), "number") for c in state_names]
        if k > last:
            raise ValueError(f"{path}, line {line}, column 'step': expected a step in 1..{last}, got {k}")
        if (k, i) in records:
            raise ValueError(
                f"{path}, line {line}: step {k}, id {i} already given on line {records[(k, i)][0]}"
            )
        records[(k, i)] = (line, x)
    if steps is None:
        if not records:
            raise ValueError(f"{path}: no truth rows; give the number of steps to simulate an empty scene")
        steps = max(k for k, _ in records)
    truth = [[] for _ in range(steps)]
    ids = [[] for _ in range(steps)]
    for (k, i), (_, x) in sorted(records.items()):
        truth[k - 1].append(x)
        ids[k - 1].append(i)
    return (
        [np.array(t, dtype=float).reshape(-1, len(state_names)) for t in truth],
        [np.array(t, dtype=np.int64) for t in ids],
    )


def simulate_with_truth(
    scenario: Scenario,
    truth: list[np.ndarray],
    truth_ids: list[np.ndarray],
    rng: np.random.Generator,
    seed: int = -1,
    truth_source: str = "",
) -> Simulation:
    """Measurements simulated around a given truth (e.g. from :func:`read_truth_csv`).

    The run has ``len(truth)`` steps; ``truth_source`` (e.g. the file name
    and its SHA-256) is recorded in the scenario's parameters.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    if len(truth) != len(truth_ids) or not truth:
        raise ValueError(
            f"truth: expected at least one step and one id array per step, got {len(truth)}, {len(truth_ids)}"
        )
    sc = dataclasses.replace(scenario, steps=len(truth), truth_seed=None, truth_source=truth_source)
    meas, origins = simulate_measurements(sc.model, truth, truth_ids, rng)
    return Simulation(sc, seed, list(truth), list(truth_ids), meas, origins)
