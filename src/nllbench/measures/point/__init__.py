"""Point-estimate measures of one run's estimates against the truth: GOSPA, OSPA, CLEAR MOT (MOTA,
MOTP) and the identity measures (IDF1).
"""
