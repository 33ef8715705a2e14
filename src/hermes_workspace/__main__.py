"""``python -m hermes_workspace``: the same as the ``hermes-workspace`` command."""

import sys

from hermes_workspace.entrypoints.launcher import main

sys.exit(main())
