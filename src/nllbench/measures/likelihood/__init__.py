"""Likelihoods beyond the per-step NLL (which the engine computes): the Theorem 1 check on the point
estimates' PMB and the trajectory NLL of a labelled posterior.
"""

#: Old module names -> their names now (:mod:`nllbench._moved`).
MOVED = {"trajectory": "trajectory_windows", "trajectory_posterior": "filter_trajectory_nll"}
