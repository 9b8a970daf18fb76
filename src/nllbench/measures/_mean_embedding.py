"""The old import path, kept working: this module is :mod:`nllbench.measures.scores._mean_embedding`."""

import sys

from nllbench.measures.scores import _mean_embedding as _moved

sys.modules[__name__] = _moved
