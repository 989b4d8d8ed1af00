"""Command line (``python -m tuner`` → :func:`tuner.cli.main`): the same entry point as the ``tuner`` script."""

import sys

from tuner.cli import main

sys.exit(main())
