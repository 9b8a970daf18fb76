"""Example trackers run on nllbench scenario files, their outputs as tidy tracks tables for scoring.

Not the scoring library (:mod:`nllbench.trackers`): these modules run other
projects' trackers (optional dependencies of the ``crosscheck`` extra) to
show and test scoring on real trackers, and serve ``config/trackers.yaml``'s
scripts in ``examples/``:

* :mod:`~nllbench.example_trackers.stonesoup`: Stone Soup's GM-PHD and JPDA
  (formerly ``nllbench.trackers.stonesoup_tracker``);
* :mod:`~nllbench.example_trackers.nrl`: nrl-tracker's Bernoulli filter, MHT and
  GNN outputs as tables, and its MHT run (formerly ``nllbench.trackers.nrl``).
"""
