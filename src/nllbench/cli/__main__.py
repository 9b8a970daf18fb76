"""``python -m nllbench.cli``: the ``nllbench`` command line."""

import sys

from nllbench.cli import main

sys.exit(main())
