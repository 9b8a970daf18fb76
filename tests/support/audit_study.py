"""A tiny propriety-audit configuration (one synthetic density, one trajectory density) for quick runs."""

from __future__ import annotations

TINY = {
    "settings": {
        "n_draws": 8,
        "blocks": 2,
        "cov_scales": [0.5, 1, 2],
        "tempers": [0.5, 1, 2],
        "shifts": [0, 1],
        "energy_samples": 10,
        "nll_q": 50,
    },
    "densities": [{"name": "MB", "kind": "synthetic", "density": "mb"}],
    "trajectories": [{"name": "traj", "kind": "synthetic", "frames": 2}],
}
