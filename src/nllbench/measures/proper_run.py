"""The old import path, kept working: this module is :mod:`nllbench.measures.scores.proper_run`."""

import sys

from nllbench.measures.scores import proper_run as _moved

sys.modules[__name__] = _moved
