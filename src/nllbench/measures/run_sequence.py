"""The old import path, kept working: this module is :mod:`nllbench.measures.run.run_sequence`."""

import sys

from nllbench.measures.run import run_sequence as _moved

sys.modules[__name__] = _moved
