"""The conv2d / dense / matmul kernels: the tuned ones when present, else fallbacks.

`topi/conv2d.py` and `topi/dense.py` hold the fast kernels (their compute and
their schedule, called with the group's output tensor, the anchor tensor and the
elementwise tensors between them to inline). Until a module exists, or if it
lacks a function, the plain version in `topi/_fallback.py` is used, so graphs
with these ops always compile.
"""

from __future__ import annotations

import importlib
from functools import cache


@cache
def implementation(module: str, compute: str, schedule: str):
    """`topi.<module>` if it defines both `compute` and `schedule`, else the
    fallbacks (a compute and a schedule always come from the same module)."""
    try:
        found = importlib.import_module(f"tilecraft.topi.{module}")
    except ModuleNotFoundError as e:
        if e.name != f"tilecraft.topi.{module}":
            raise  # the module exists but something it imports does not
        found = None
    if found is not None and hasattr(found, compute) and hasattr(found, schedule):
        return found
    from tilecraft.topi import _fallback

    return _fallback


def conv2d_compute(*args, **kwargs):
    return implementation("conv2d", "conv2d_compute", "schedule_conv2d").conv2d_compute(*args, **kwargs)


def schedule_conv2d(s, out, conv, inlined):
    implementation("conv2d", "conv2d_compute", "schedule_conv2d").schedule_conv2d(s, out, conv, inlined)


def dense_compute(x, w, bias=None, weight_layout="NK"):
    """x @ w^T (+ bias) with w [N, K] ("NK") or x @ w with w [K, N] ("KN")."""
    module = implementation("dense", "dense_compute", "schedule_dense")
    if weight_layout == "NK":
        return module.dense_compute(x, w, bias)
    return module.dense_compute(x, w, bias, weight_layout=weight_layout)


def schedule_dense(s, out, dense, inlined):
    implementation("dense", "dense_compute", "schedule_dense").schedule_dense(s, out, dense, inlined)


def matmul_compute(a, b):
    return implementation("dense", "matmul_compute", "schedule_matmul").matmul_compute(a, b)


def schedule_matmul(s, out, mm, inlined):
    implementation("dense", "matmul_compute", "schedule_matmul").schedule_matmul(s, out, mm, inlined)
