"""The old import path, kept working: this module is :mod:`nllbench.measures.tracks.tgospa`."""

import sys

from nllbench.measures.tracks import tgospa as _moved

sys.modules[__name__] = _moved
