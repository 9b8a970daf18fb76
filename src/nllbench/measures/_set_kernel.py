"""The old import path, kept working: this module is :mod:`nllbench.measures.scores._set_kernel`."""

import sys

from nllbench.measures.scores import _set_kernel as _moved

sys.modules[__name__] = _moved
