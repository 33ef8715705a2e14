"""``python -m hermes_workspace``: the same as the ``hermes-workspace`` command."""

import sys

from hermes_workspace.entrypoints.cli import main

sys.exit(main())
