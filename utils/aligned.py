"""numpy arrays whose data starts on a 64-byte boundary (a cache line, one zmm).

The buffers compiled code allocates itself (arena, task buffers) are 64-byte
aligned; numpy's are only 16-byte aligned (a large array comes from mmap, one
16-byte header past a page). A kernel's vector loads and stores assume nothing
about alignment, so a misaligned array is read correctly, but every 64-byte
vector access then straddles two cache lines: BERT's 3072 x 768 dense with its
weight 16 bytes off a line ran 1.18x slower than with the same weight aligned.
So the arrays tilecraft allocates for compiled code (bound weights, output
arrays, the tuner's measurement buffers) are made here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where arrays are made: passes that read ALIGNMENT
    import numpy as np  # do not load numpy for it

ALIGNMENT = 64


def aligned_empty(shape, dtype) -> np.ndarray:
    """np.empty(shape, dtype) whose data starts on an ALIGNMENT-byte boundary."""
    import numpy as np

    dtype = np.dtype(dtype)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def is_aligned(array: np.ndarray) -> bool:
    return array.ctypes.data % ALIGNMENT == 0


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous, aligned copy of `array` (always a copy: the caller may keep
    writing the original)."""
    copy = aligned_empty(array.shape, array.dtype)
    copy[...] = array
    return copy


def aligned(array: np.ndarray) -> np.ndarray:
    """`array` itself when it is C-contiguous and aligned, else an aligned copy."""
    if array.flags.c_contiguous and is_aligned(array):
        return array
    return aligned_copy(array)
