"""The old import path, kept working: this module is :mod:`nllbench.measures.run.presets`."""

import sys

from nllbench.measures.run import presets as _moved

sys.modules[__name__] = _moved
