"""`tilecraft.testing`: the checks TVM's tutorials call (`tvm.testing.assert_allclose`)."""

from __future__ import annotations

import numpy as np


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """numpy's assert_allclose on arrays or NDArrays (TVM's defaults: 1e-7 both)."""
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), rtol=rtol, atol=atol, verbose=True)
