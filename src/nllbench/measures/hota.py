"""The old import path, kept working: this module is :mod:`nllbench.measures.tracks.hota`."""

import sys

from nllbench.measures.tracks import hota as _moved

sys.modules[__name__] = _moved
