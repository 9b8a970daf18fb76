"""Proper scores beyond the NLL: the set energy score, the quadratic intensity score and the
cardinality RPS (``proper``; compiled parts in ``_set_kernel``, ``_mean_embedding``; the intensity's
parts in ``_intensity``), and their values per step of a run (``proper_run``).
"""
