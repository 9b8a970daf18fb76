"""The old import path, kept working: this module is :mod:`nllbench.measures.scores.proper`."""

import sys

from nllbench.measures.scores import proper as _moved

sys.modules[__name__] = _moved
