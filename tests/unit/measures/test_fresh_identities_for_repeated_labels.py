"""``fresh_identities``: every unlabelled (< 0) or repeated label gets a fresh negative identity, in
order; checked against the definition written with ``np.unique`` (first occurrences keep theirs)."""

from __future__ import annotations

import numpy as np

from nllbench.measures.run.run_sequence import fresh_identities


def _reference(labels: np.ndarray, fresh: int) -> tuple[np.ndarray, int]:
    labels = labels.copy()
    _, first = np.unique(labels, return_index=True)
    repeated = np.ones(labels.size, dtype=bool)
    repeated[first] = False
    for i in np.flatnonzero((labels < 0) | repeated):
        labels[i] = fresh
        fresh -= 1
    return labels, fresh


def test_random_labels_match_the_definition():
    rng = np.random.default_rng(5)
    fresh = -1
    for _ in range(300):
        labels = rng.integers(-3, 6, int(rng.integers(0, 12))).astype(np.int64)
        want, want_fresh = _reference(labels, fresh)
        got, got_fresh = fresh_identities(labels.copy(), fresh)
        assert got.dtype == np.int64 and np.array_equal(got, want) and got_fresh == want_fresh
        fresh = got_fresh


def test_edges():
    empty = np.empty(0, dtype=np.int64)
    got, fresh = fresh_identities(empty, -4)
    assert got.size == 0 and fresh == -4
    got, fresh = fresh_identities(np.array([7, 7, -1, 3, 7, 3]), -1)
    assert got.tolist() == [7, -1, -2, 3, -3, -4] and fresh == -5
    labels = np.array([2, 5, 9])
    got, fresh = fresh_identities(labels, -1)
    assert got is labels and got.tolist() == [2, 5, 9] and fresh == -1  # changed in place, here not at all
