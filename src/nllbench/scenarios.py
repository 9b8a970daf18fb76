"""Scenario presets and the simulation of truth and measurements.

Presets carry the community's parameters (``shared/REFERENCE.md``):

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

import dataclasses
from dataclasses import dataclass

import numpy as np

from nllbench.models import POSITION_H, GaussianMixture, Model, cv_matrices


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
    the run's generator).
    """

    name: str
    steps: int
    model: Model
    truth_plan: TruthPlan
    truth_seed: int | None
    process_noise: float
    measurement_noise: float

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


PRESETS = {"williams15": _williams15, "chalmers": _chalmers}

OVERRIDABLE = (
    "clutter_rate",
    "p_detection",
    "p_survival",
    "steps",
    "process_noise",
    "measurement_noise",
    "truth_seed",
)


def get_scenario(name: str, **overrides) -> Scenario:
    """A preset with parameters overridden.

    Overridable: clutter_rate, p_detection, p_survival, steps (truncates or
    extends the run; objects alive at the end stay alive), process_noise
    (q of the CV model), measurement_noise (std of each position
    coordinate), truth_seed (None draws the truth from the run's generator).
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
        if steps < 1:
            raise ValueError(f"steps: expected a positive integer, got {overrides['steps']!r}")
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
