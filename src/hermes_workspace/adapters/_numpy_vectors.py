"""numpy arrays in and out of the local models: padded token-id batches in, unit-length rows out,
and a row as the port's float32 :data:`~hermes_workspace.domain.semantic.Vector`. numpy is imported
inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_workspace.domain.semantic import Vector

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np


def pad_batch(batch: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """``(input_ids, attention_mask)``: int64 arrays of shape (batch, longest), right-padded."""
    import numpy as np

    longest = max(len(ids) for ids in batch)
    input_ids = np.full((len(batch), longest), pad_id, dtype=np.int64)
    mask = np.zeros((len(batch), longest), dtype=np.int64)
    for i, ids in enumerate(batch):
        input_ids[i, : len(ids)] = ids
        mask[i, : len(ids)] = 1
    return input_ids, mask


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row of a (n, d) array scaled to L2 norm 1 (float64 math, float32 result; zero rows
    stay zero)."""
    import numpy as np

    values = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    return (values / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def to_vector(row: np.ndarray) -> Vector:
    """A numpy row as a float32 :data:`Vector` (``array('f')``): no numpy type crosses the port."""
    import numpy as np

    return array("f", np.ascontiguousarray(row, dtype="<f4").tobytes())
