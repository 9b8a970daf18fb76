"""The old import path, kept working: this module is :mod:`nllbench.measures.run.evaluate`."""

import sys

from nllbench.measures.run import evaluate as _moved

sys.modules[__name__] = _moved
