"""The chunk checks moved to :mod:`hermes_workspace.testing.chunks` (shipped to plugin authors);
re-exported here for our own tests."""

from hermes_workspace.testing.chunks import *  # noqa: F403
from hermes_workspace.testing.chunks import _paragraphs  # noqa: F401
