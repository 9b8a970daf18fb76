"""Measures on a run, one subpackage per family, each measure declared once.

* :mod:`~nllbench.measures.declarations` (every measure's declaration) and
  :mod:`~nllbench.measures.names` (the names derived from them);
* :mod:`~nllbench.measures.point`: GOSPA, OSPA, CLEAR MOT, IDF1 of the point estimates;
* :mod:`~nllbench.measures.tracks`: trajectory GOSPA and HOTA of labelled estimates;
* :mod:`~nllbench.measures.likelihood`: the Theorem 1 check and the trajectory NLL;
* :mod:`~nllbench.measures.scores`: the proper scores beyond the NLL;
* :mod:`~nllbench.measures.calibration`: calibration of existence, covariances and cardinality;
* :mod:`~nllbench.measures.run`: all of them on a run at once (evaluate) and the presets.

The modules' old paths (``nllbench.measures.metrics``, ``.evaluate``, ``.tgospa``, ...) keep
working: each is the moved module itself.
"""
