"""Small models and scenes of the trajectory filter tests, and the batch smoother's joint density
(shared by the trajectory PMBM and PMB filter tests)."""

from __future__ import annotations

import math

import numpy as np

from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.simulation.models import POSITION_H, Model, cv_matrices


def make_model(p_s=1.0, p_d=1.0, clutter=0.0, birth_w=(), initial_w=1.0, q=0.3):
    F, Q = cv_matrices(1.0, q)
    P0 = np.diag([4.0, 4.0, 1.0, 1.0])
    B = len(birth_w)
    birth = GaussianMixture(
        np.asarray(birth_w, dtype=float), np.tile([5.0, 5.0, 0.0, 0.0], (B, 1)).reshape(B, 4),
        np.tile(P0, (B, 1, 1)).reshape(B, 4, 4),
    )  # fmt: skip
    return Model(
        F=F, Q=Q, H=POSITION_H, R=0.5 * np.eye(2), p_survival=p_s, p_detection=p_d, clutter_rate=clutter,
        fov_low=[-50.0, -50.0], fov_high=[50.0, 50.0], birth=birth, birth_r=np.full(B, 0.01),
        initial=GaussianMixture([initial_w], [[0.0, 0.0, 1.0, 0.5]], [P0]),
    )  # fmt: skip


def simulate_one(model, K, rng):
    x = rng.multivariate_normal(model.initial.means[0], model.initial.covs[0])
    X, Z = [], []
    for k in range(K):
        if k:
            x = model.F @ x + rng.multivariate_normal(np.zeros(4), model.Q)
        X.append(x)
        Z.append((model.H @ x + rng.multivariate_normal(np.zeros(2), model.R))[None, :])
    return np.array(X), Z


def smoother_joint(model, Z):
    """The joint Gaussian of x_0..x_{K-1} given the measurements, by batch conditioning (no recursion)."""
    K, d = len(Z), 4
    A = np.zeros((K * d, K * d))  # X = A (x_0, w_1, ..., w_{K-1})
    for k in range(K):
        for s in range(k + 1):
            A[k * d : (k + 1) * d, s * d : (s + 1) * d] = np.linalg.matrix_power(model.F, k - s)
    noise = np.zeros((K * d, K * d))
    noise[:d, :d] = model.initial.covs[0]
    for k in range(1, K):
        noise[k * d : (k + 1) * d, k * d : (k + 1) * d] = model.Q
    mu = A @ np.concatenate([model.initial.means[0], np.zeros((K - 1) * d)])
    Sigma = A @ noise @ A.T
    Hb = np.kron(np.eye(K), model.H)
    Rb = np.kron(np.eye(K), model.R)
    S = Hb @ Sigma @ Hb.T + Rb
    G = Sigma @ Hb.T @ np.linalg.inv(S)
    z = np.concatenate([zk[0] for zk in Z])
    return mu + G @ (z - Hb @ mu), Sigma - G @ S @ G.T


def scene(model, K, rng, n_objects=2, clutter=1.0):
    """Measurements of a few straight-moving objects plus uniform clutter; truths per step."""
    x = np.array([[-10.0, 0.0, 1.0, 0.2], [10.0, 0.0, -1.0, 0.1], [0.0, 10.0, 0.3, -1.0]])[:n_objects]
    Z, truth = [], []
    for k in range(K):
        if k:
            x = x @ model.F.T
        det = rng.uniform(size=len(x)) < model.p_detection
        z = x[det] @ model.H.T + rng.normal(0, math.sqrt(model.R[0, 0]), (int(det.sum()), 2))
        c = rng.uniform(-50, 50, (rng.poisson(clutter), 2))
        Z.append(np.concatenate([z, c]))
        truth.append(x.copy())
    return Z, truth
