"""The Python libraries of the local embedders (ONNX, sentence-transformers, model2vec) and the
cross-encoder reranker: the install command of the ``semantic`` extra, the error for a library that
is missing, and making the Hugging Face libraries work offline and quietly. Imports none of them at
module import time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from hermes_workspace.domain.errors import EmbedderUnavailableError, WorkspaceError

SEMANTIC_INSTALL = "pip install 'hermes-workspace[semantic]'"
"""The command that installs every library the local embedders and the cross-encoder need."""


def hf_offline() -> None:
    """Make the Hugging Face libraries work offline before they are imported: nothing may be
    downloaded at run time. ``setdefault`` so a host application that chose otherwise for its
    own use keeps its choice; the adapters also pass ``local_files_only`` / folders only."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(var, "1")
    # Progress bars of hub downloads and of weight loading would land on the CLI's stderr.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def missing_library(
    exc: ImportError, what: str, error: type[WorkspaceError] = EmbedderUnavailableError
) -> WorkspaceError:
    """The error to raise when ``what`` (e.g. "the onnx embedder") cannot import a library:
    ``error`` (:class:`EmbedderUnavailableError` or the reranker's) naming the missing module and
    hinting at :data:`SEMANTIC_INSTALL`."""
    module = getattr(exc, "name", None) or str(exc)
    return error(
        f"{what} needs the Python package {module!r}, which is not installed",
        hint=f"Install the semantic extra: {SEMANTIC_INSTALL}",
    )


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and weight-loading progress bar while a model loads
    (they would be printed on the CLI's stderr), restoring the host's settings afterwards."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
