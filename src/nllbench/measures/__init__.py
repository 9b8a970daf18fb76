"""Measures on a run: GOSPA, OSPA, CLEAR MOT, IDF1, trajectory GOSPA, HOTA, calibration,
Theorem 1, and all of them at once (evaluate).
"""
