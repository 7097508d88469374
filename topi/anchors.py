"""The conv2d / dense / matmul kernels the strategy calls: `topi/conv2d.py` and
`topi/dense.py` (their compute, and their schedule called with the group's output
tensor, the anchor tensor and the elementwise tensors between them to inline).
"""

from __future__ import annotations

from tilecraft.topi import conv2d, dense, winograd


def conv2d_compute(*args, **kwargs):
    return conv2d.conv2d_compute(*args, **kwargs)


def winograd_conv2d_compute(data, weight, pads):
    return winograd.winograd_conv2d_compute(data, weight, pads)


def winograd_weight_compute(weight):
    return winograd.winograd_weight_compute(weight)


def schedule_conv2d(s, out, conv, inlined):
    if winograd.winograd_info(conv) is not None:
        winograd.schedule_winograd(s, out, conv, inlined)
    else:
        conv2d.schedule_conv2d(s, out, conv, inlined)


def dense_compute(x, w, bias=None, weight_layout="NK"):
    """x @ w^T (+ bias) with w [N, K] ("NK") or x @ w with w [K, N] ("KN")."""
    return dense.dense_compute(x, w, bias, weight_layout=weight_layout)


def schedule_dense(s, out, d, inlined):
    dense.schedule_dense(s, out, d, inlined)


def matmul_compute(a, b):
    return dense.matmul_compute(a, b)


def schedule_matmul(s, out, mm, inlined):
    dense.schedule_matmul(s, out, mm, inlined)
