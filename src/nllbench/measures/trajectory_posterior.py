"""The old import path, kept working.

This module is :mod:`nllbench.measures.likelihood.trajectory_posterior`.
"""

import sys

from nllbench.measures.likelihood import trajectory_posterior as _moved

sys.modules[__name__] = _moved
