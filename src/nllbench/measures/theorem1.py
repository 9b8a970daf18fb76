"""The old import path, kept working: this module is :mod:`nllbench.measures.likelihood.theorem1`."""

import sys

from nllbench.measures.likelihood import theorem1 as _moved

sys.modules[__name__] = _moved
