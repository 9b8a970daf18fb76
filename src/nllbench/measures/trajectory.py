"""The old import path, kept working: this module is :mod:`nllbench.measures.likelihood.trajectory`."""

import sys

from nllbench.measures.likelihood import trajectory as _moved

sys.modules[__name__] = _moved
