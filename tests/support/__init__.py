"""Helpers every test layer imports: brute-force references, random densities, paths and data files.

``tests/conftest.py`` puts ``tests/`` on ``sys.path``, so a test in any layer imports them as
``from support.bruteforce import pmbm_log_likelihood`` or ``from support.paths import ROOT``.
"""
