"""Plain conv2d / dense / matmul computes and schedules, used until (or unless) the
tuned kernels of `topi/conv2d.py` and `topi/dense.py` exist.

They take the same arguments as those modules' functions (see `topi/anchors.py`,
which picks one or the other), and are written to be obviously right first and
reasonably fast second: parallel outer loops, and an inner loop that reads memory
contiguously so LLVM vectorizes it (dot products over K for dense; the output row
for conv2d and matmul).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.topi.schedule import PARALLEL_MIN_ELEMENTS, _vectorize_tail
from tilecraft.topi.transform import pad as pad_compute


def _block(layout: str) -> int:
    return 0 if layout == "NCHW" else int(layout[4:-1])


def _kernel_blocks(layout: str) -> tuple[int, int]:
    if layout == "OIHW":
        return 0, 0
    m = re.fullmatch(r"OIHW(\d+)i(\d+)o", layout)
    assert m, layout
    return int(m.group(1)), int(m.group(2))


def conv2d_compute(
    data: te.Tensor,
    weight: te.Tensor,
    bias: te.Tensor | None,
    *,
    strides: Sequence[int] = (1, 1),
    pads: Sequence[int] = (0, 0, 0, 0),
    dilations: Sequence[int] = (1, 1),
    groups: int = 1,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_layout: str | None = None,
) -> te.Tensor:
    """Direct convolution in any of graph.conv2d's layouts (blocked ones are read
    through index arithmetic: channel c of NCHW<b>c lives at [c // b, ..., c % b])."""
    out_layout = out_layout or data_layout
    db, (kib, kob), ob = _block(data_layout), _kernel_blocks(kernel_layout), _block(out_layout)
    n = data.shape[0]
    c = data.shape[1] * db if db else data.shape[1]
    h, w = data.shape[2], data.shape[3]
    o = weight.shape[0] * kob if kob else weight.shape[0]
    kh, kw = weight.shape[2], weight.shape[3]
    cpg, opg = c // groups, o // groups
    sh, sw = strides
    dh, dw = dilations
    pt, pl, pb, pr = pads
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    if pt or pl or pb or pr:
        pad_spec = [0] * data.ndim * 2
        pad_spec[2], pad_spec[3] = pt, pl
        pad_spec[data.ndim + 2], pad_spec[data.ndim + 3] = pb, pr
        data = pad_compute(data, pad_spec, 0.0, name="conv_pad")

    def x_at(b, ch, y, z):
        return data[b, ch // db, y, z, ch % db] if db else data[b, ch, y, z]

    def w_at(oc, ic, y, z):
        if kob:
            return weight[oc // kob, ic // kib, y, z, ic % kib, oc % kob]
        return weight[oc, ic, y, z]

    rc = te.reduce_axis((0, cpg), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def conv(b, oc, y, z):
        ch = rc if groups == 1 else (oc // opg) * cpg + rc
        return te.sum(
            x_at(b, ch, y * sh + ry * dh, z * sw + rx * dw) * w_at(oc, rc, ry, rx),
            axis=[rc, ry, rx],
        )

    out = te.compute((n, o, oh, ow), conv, name="conv2d")
    if bias is not None:
        conv_only = out
        out = te.compute((n, o, oh, ow), lambda b, oc, y, z: conv_only[b, oc, y, z] + bias[oc], name="conv2d_bias")
    if ob:
        nchw = out
        out = te.compute(
            (n, o // ob, oh, ow, ob),
            lambda b, co, y, z, ci: nchw[b, co * ob + ci, y, z],
            name="conv2d_blocked",
        )
    return out


def _anchor_reduce(anchor: te.Tensor) -> tuple[te.Tensor, list[te.Tensor]]:
    """The reduction stage under an anchor's bias/layout stages, and those stages."""
    wrappers = []
    t = anchor
    while not t.op.reduce_axis:
        wrappers.append(t)
        t = next(u for u in t.op.input_tensors if isinstance(u.op, te.ComputeOp) and u.name != "conv_pad")
    return t, wrappers


def _finish(s: te.Schedule, out: te.Tensor, anchor: te.Tensor, inlined: Sequence[te.Tensor]):
    from tilecraft.topi.schedule import schedule_injective

    red, wrappers = _anchor_reduce(anchor)
    for t in list(inlined) + [w for w in wrappers if w is not out]:
        s[t].compute_inline()
    for t in red.op.input_tensors:
        if t.name == "conv_pad" and isinstance(t.op, te.ComputeOp):
            schedule_injective(s, t)
    if out is not red:
        schedule_injective(s, out)
    return red


def schedule_conv2d(s: te.Schedule, out: te.Tensor, conv: te.Tensor, inlined: Sequence[te.Tensor]) -> None:
    red = _finish(s, out, conv, inlined)
    b, oc, y, z = s[red].op.axis
    rc, ry, rx = s[red].op.reduce_axis
    s[red].reorder(b, oc, y, rc, ry, rx, z)
    _vectorize_tail(s, red, z, red.shape[3])
    fused = s[red].fuse(b, oc)
    if math.prod(red.shape) >= PARALLEL_MIN_ELEMENTS // 4:
        s[red].parallel(fused)


def dense_compute(x: te.Tensor, w: te.Tensor, bias: te.Tensor | None = None) -> te.Tensor:
    """x[..., K] @ w[N, K]^T (+ bias[N])."""
    k = te.reduce_axis((0, x.shape[-1]), name="k")
    shape = (*x.shape[:-1], w.shape[0])
    out = te.compute(shape, lambda *i: te.sum(x[(*i[:-1], k)] * w[i[-1], k], axis=k), name="dense")
    if bias is None:
        return out
    mm = out
    return te.compute(shape, lambda *i: mm[i] + bias[i[-1]], name="dense_bias")


def schedule_dense(s: te.Schedule, out: te.Tensor, dense: te.Tensor, inlined: Sequence[te.Tensor]) -> None:
    red = _finish(s, out, dense, inlined)
    axes = s[red].op.axis
    fused = s[red].fuse(*axes) if len(axes) > 1 else axes[0]
    if math.prod(red.shape) * red.op.reduce_axis[0].extent >= PARALLEL_MIN_ELEMENTS:
        s[red].parallel(fused)


def matmul_compute(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """numpy matmul on the last two axes with broadcast batch axes (ranks >= 2)."""
    from tilecraft.topi.common import broadcast_shape

    batch = broadcast_shape(a.shape[:-2], b.shape[:-2]) if a.ndim > 2 or b.ndim > 2 else ()
    k = te.reduce_axis((0, a.shape[-1]), name="k")
    nb = len(batch)

    def batch_index(t, i):
        skip = nb - (t.ndim - 2)
        return tuple(0 if n == 1 else i[skip + d] for d, n in enumerate(t.shape[:-2]))

    def f(*i):
        row, col = i[nb], i[nb + 1]
        return te.sum(a[(*batch_index(a, i), row, k)] * b[(*batch_index(b, i), k, col)], axis=k)

    return te.compute((*batch, a.shape[-2], b.shape[-1]), f, name="matmul")


def schedule_matmul(s: te.Schedule, out: te.Tensor, mm: te.Tensor, inlined: Sequence[te.Tensor]) -> None:
    red = _finish(s, out, mm, inlined)
    axes = list(s[red].op.axis)
    (k,) = s[red].op.reduce_axis
    s[red].reorder(*axes[:-1], k, axes[-1])
    _vectorize_tail(s, red, axes[-1], red.shape[-1])
    head = s[red].fuse(*axes[:-1]) if len(axes) > 2 else axes[0]
    if math.prod(red.shape) * k.extent >= PARALLEL_MIN_ELEMENTS:
        s[red].parallel(head)
