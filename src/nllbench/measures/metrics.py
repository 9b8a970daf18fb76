"""The old import path, kept working: this module is :mod:`nllbench.measures.point.metrics`."""

import sys

from nllbench.measures.point import metrics as _moved

sys.modules[__name__] = _moved
