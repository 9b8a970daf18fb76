"""The pipeline's stages: config validation and rule helpers (``workflow``), file-to-file runs
(``runs``), aggregation (``collect``, ``cube``, ``statistics``, ``pooling``, orchestrated by
``aggregate``), figures (``plots``), the report (``report``) and the reference GOSPA table
(``reference``).
"""
