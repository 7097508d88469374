"""The anchors of fusion: conv2d (direct, blocked, straddling, Winograd), dense,
matmul and pooling.
"""

from __future__ import annotations

import re
from typing import ClassVar
from collections.abc import Sequence
from dataclasses import dataclass
from xdsl.dialects.builtin import (
    TensorType,
    i64,
)
from xdsl.ir import Operation
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    traits_def,
)
from xdsl.traits import Pure

from tilecraft.dialects.graph.traits import ComplexOutFusable, Opaque, Reduction
from tilecraft.dialects.graph.shapes import ShapeError, broadcast_shapes, layout_block, pool_out, ranked, shape_of, tensor
from tilecraft.dialects.graph.properties import Bool, ConvAlgorithmAttr, Enum, Int, Ints, PANEL, Str, WeightLayoutAttr, dense_weight_nk
from tilecraft.dialects.graph.op import GraphOp

__all__ = [
    "window_rank", "window_value", "STRADDLE", "straddle_layout", "StraddleRows", "straddle_rows", "Conv2dOp",
    "check_winograd", "DenseOp", "MatmulOp", "MaxPool2dOp", "AvgPool2dOp", "MaxPoolIndicesOp", "GlobalAvgPool2dOp",
    "WinogradWeightOp",
]  # fmt: skip


# -- anchors: conv2d, dense, matmul, pooling ---------------------------------------


def window_rank(op: Operation) -> int:
    """The number of spatial axes of a convolution or pooling `op`: its first
    operand's rank less N and C (and the lane axis of a blocked layout)."""
    if not op.operands or not isinstance(op.operands[0].type, TensorType):
        return 2
    rank = len(shape_of(op.operands[0].type)) - 2
    return rank - 1 if isinstance(op, Conv2dOp) and op.data_layout != "NCHW" else rank


def window_value(op: GraphOp, name: str, rank: int, fill: int) -> tuple[int, ...]:
    """Property `name` of a window op (strides, pads, dilations), or its default for
    `rank` spatial axes: `fill` repeated (twice as many for pads). `infer` reads it
    this way, since it may run before the op has operands."""
    attr = op.properties.get(name)
    count = 2 * rank if name == "pads" else rank
    value = type(op).props()[name].value(attr) if attr is not None else (fill,) * count
    if len(value) != count:
        raise ShapeError(f"{name} needs {count} values for {rank} spatial axes, got {len(value)}")
    return value


STRADDLE = re.compile(r"straddle(\d+)c(\d+)o(\d+)i(\d+)o")


def straddle_layout(kernel_layout: str) -> tuple[int, int, int, int] | None:
    """(C, O, in-block, out-block) of a kernel layout "straddle<C>c<O>o<i>i<o>o",
    else None."""
    m = STRADDLE.fullmatch(kernel_layout)
    return tuple(int(v) for v in m.groups()) if m else None  # type: ignore[return-value]


@dataclass(frozen=True)
class StraddleRows:
    """The weight rows of a grouped conv whose output channel blocks straddle groups
    (kernel layout "straddle<C>c<O>o<i>i<o>o", topi/conv2d.py
    `conv2d_straddle_compute`): a row per (output block, group of its lanes), rows
    0 .. OCB-1 for each block's first group and one more per straddling block;
    `group[r]` and `block[r]` (the output block whose lanes of that group it
    computes) of each row. A row reads exactly the C/groups input channels of its
    group, `i` at a time."""

    group: tuple[int, ...]
    block: tuple[int, ...]

    def extra(self, ocb: int) -> list[int]:
        """The rows after the first that compute lanes of output block `ocb`."""
        return [r for r in range(len(self.group)) if self.block[r] == ocb and r != ocb]


def straddle_rows(in_channels: int, out_channels: int, groups: int, in_block: int, out_block: int) -> StraddleRows:
    """The rows of a straddling grouped conv of C -> O channels (O padded up to whole
    blocks of `out_block`) that reads its input `in_block` channels at a time; a
    ValueError where the groups do not split the channels, `in_block` does not
    divide a group's input channels, or an output block holds more than two groups."""
    C, O = in_channels, out_channels
    if groups <= 0 or C % groups or O % groups or in_block <= 0 or out_block <= 0:
        raise ValueError(f"straddling conv: {C} -> {O} channels do not split into groups={groups}")
    Cg, Og = C // groups, O // groups
    if Cg % in_block:
        raise ValueError(f"straddling conv: {Cg} input channels per group are not blocks of {in_block}")
    OCB = -(-O // out_block)
    first: list[tuple[int, int]] = []  # (block, group) of rows 0 .. OCB-1
    more: list[tuple[int, int]] = []
    for ocb in range(OCB):
        g0 = ocb * out_block // Og
        g1 = (min(ocb * out_block + out_block, O) - 1) // Og
        if g1 > g0 + 1:
            raise ValueError(
                f"straddling conv: {Og} output channels per group, a block of {out_block} holds more than two groups"
            )
        first.append((ocb, g0))
        more += [(ocb, g) for g in range(g0 + 1, g1 + 1)]
    pairs = first + more
    return StraddleRows(group=tuple(g for _, g in pairs), block=tuple(b for b, _ in pairs))


@irdl_op_definition
class Conv2dOp(GraphOp):
    """Convolution with optional bias [O] over 1 to 3 spatial axes (the name is the
    2-D case it began with; the input's rank gives the spatial rank): attributes
    `strides`, `pads` [begin..., end...] ([top, left, bottom, right] in 2-D),
    `dilations`, `groups` (defaults: ones, zeros, ones, 1), and, in 2-D only, layouts:

    - `data_layout` "NCHW" (default) or blocked "NCHW<b>c": input [N, C/b, H, W, b];
    - `kernel_layout` "OIHW" (default) or "OIHW<i>i<o>o": weight [O/o, I/i, KH, KW, i, o];
      or, for a grouped conv of C -> O channels whose groups cut blocks,
      "straddle<C>c<O>o<i>i<o>o": weight [rows, C/groups/i, KH, KW, i, o] as
      `straddle_rows` gives them (NCHW<b>c data with i dividing b, NCHW<o>c output,
      C and O padded to whole blocks);
    - `out_layout` (default: `data_layout`) likewise for the output.

    Blocked layouts (what alter-layout produces) take no bias operand.

    `algorithm` "direct" (default) or "winograd": Winograd F(2x2, 3x3) (what
    winograd-conv2d chooses), for a 3x3 kernel, strides and dilations 1, groups 1 and
    blocked data, kernel and output layouts whose channel blocks agree; the weight is
    then the transformed one, `graph.winograd_weight` of the OIHW<i>i<o>o weight:
    [4, 4, O/o, I/i, i, o]."""

    name = "graph.conv2d"
    traits = traits_def(Pure(), ComplexOutFusable())
    input = operand_def()
    weight = operand_def()
    bias = opt_operand_def()
    strides = Ints(default=lambda op: (1,) * window_rank(op))
    pads = Ints(default=lambda op: (0,) * 2 * window_rank(op))
    dilations = Ints(default=lambda op: (1,) * window_rank(op))
    groups = Int(default=1)
    data_layout = Str(default="NCHW")
    kernel_layout = Str(default="OIHW")
    out_layout = Str(default=lambda op: op.data_layout)
    algorithm = Enum(ConvAlgorithmAttr, default="direct")
    SYMBOLIC: ClassVar[bool] = True  # (a batch passes through; windows over symbolic extents are sizes too)

    def layouts(self) -> tuple[int, tuple[int, int], int]:
        """(input block, (kernel in-block, kernel out-block), output block); 0 = unblocked."""
        data, kernel, out = self.data_layout, self.kernel_layout, self.out_layout
        kb = (0, 0)
        straddle = straddle_layout(kernel)
        if straddle is not None:
            kb = straddle[2:]
        elif kernel != "OIHW":
            m = re.fullmatch(r"OIHW(\d+)i(\d+)o", kernel)
            if not m:
                raise ShapeError(f"unknown kernel layout '{kernel}' (OIHW, OIHW<i>i<o>o or straddle<C>c<O>o<i>i<o>o)")
            kb = (int(m.group(1)), int(m.group(2)))
        return layout_block(data), kb, layout_block(out)

    def infer(self, types):
        db, (kib, kob), ob = self.layouts()
        x, w = shape_of(types[0]), shape_of(types[1])
        if db:
            if len(x) != 5 or x[4] != db:
                raise ShapeError(f"input {x} is not in layout NCHW{db}c")
            n, c, spatial = x[0], x[1] * db, x[2:4]
        elif not 3 <= len(x) <= 5:
            raise ShapeError(f"conv2d takes an N, C and 1 to 3 spatial axes input, got rank {len(x)}")
        else:
            n, c, spatial = x[0], x[1], x[2:]
        rank = len(spatial)
        if rank != 2 and (kob or ob):
            raise ShapeError(f"blocked layouts are 2-D, the input {x} has {rank} spatial axes")
        straddle = straddle_layout(self.kernel_layout)
        if straddle is not None and self.algorithm == "direct":
            return self.infer_straddle(types, straddle)
        if self.algorithm == "winograd":
            check_winograd(self, db, (kib, kob), ob, w)
            o, ci, kernel = w[2] * kob, w[3] * kib, (3, 3)
        elif kob:
            if len(w) != 6 or w[4] != kib or w[5] != kob:
                raise ShapeError(f"weight {w} is not in layout OIHW{kib}i{kob}o")
            o, ci, kernel = w[0] * kob, w[1] * kib, w[2:4]
        elif len(w) != len(spatial) + 2:
            raise ShapeError(f"conv2d takes a weight [O, I, kernel...] of rank {rank + 2}, got rank {len(w)}")
        else:
            o, ci, kernel = w[0], w[1], w[2:]
        groups = self.groups
        if groups < 1:
            raise ShapeError(f"groups must be positive, got {groups}")
        strides = window_value(self, "strides", rank, 1)
        pads = window_value(self, "pads", rank, 0)
        dilations = window_value(self, "dilations", rank, 1)
        if c % groups or o % groups or ci * groups != c:
            raise ShapeError(f"input channels {c} and weight {w} do not match groups={groups}")
        if len(types) == 3:
            if db or kob or ob:
                raise ShapeError("a conv2d in blocked layouts takes no bias operand")
            if shape_of(types[2]) != (o,):
                raise ShapeError(f"bias must have shape ({o},), got {shape_of(types[2])}")
        out = tuple(
            pool_out(size, k, s, lo, hi, d)
            for size, k, s, lo, hi, d in zip(spatial, kernel, strides, pads[:rank], pads[rank:], dilations)
        )
        element = ranked(types[0]).get_element_type()
        if ob:
            if o % ob:
                raise ShapeError(f"{o} output channels do not split into blocks of {ob}")
            return [tensor((n, o // ob, *out, ob), element)]
        return [tensor((n, o, *out), element)]

    def infer_straddle(self, types, layout: tuple[int, int, int, int]):
        c, o, ib, ob = layout
        db, ob_out = layout_block(self.data_layout), layout_block(self.out_layout)
        if not db or db % ib or ob_out != ob:
            raise ShapeError(
                f"kernel layout {self.kernel_layout} needs data NCHW<b>c with b a multiple of {ib} and output "
                f"NCHW{ob}c, not {self.data_layout} and {self.out_layout}"
            )
        x, w = shape_of(types[0]), shape_of(types[1])
        if len(x) != 5 or x[4] != db or x[1] != -(-c // db):
            raise ShapeError(f"input {x} is not {c} channels in layout NCHW{db}c")
        if len(types) == 3:
            raise ShapeError("a conv2d in blocked layouts takes no bias operand")
        try:
            rows = straddle_rows(c, o, self.groups, ib, ob)
        except ValueError as e:
            raise ShapeError(str(e)) from None
        sub = c // self.groups // ib
        if len(w) != 6 or (w[0], w[1], w[4], w[5]) != (len(rows.group), sub, ib, ob):
            raise ShapeError(
                f"weight {w} is not in layout {self.kernel_layout} "
                f"([{len(rows.group)}, {sub}, KH, KW, {ib}, {ob}])"
            )
        strides = window_value(self, "strides", 2, 1)
        pads = window_value(self, "pads", 2, 0)
        dilations = window_value(self, "dilations", 2, 1)
        if tuple(dilations) != (1, 1):
            raise ShapeError(f"kernel layout {self.kernel_layout} takes no dilations, got {dilations}")
        out = tuple(
            pool_out(size, k, s, lo, hi, 1) for size, k, s, lo, hi in zip(x[2:4], w[2:4], strides, pads[:2], pads[2:])
        )
        return [tensor((x[0], -(-o // ob), *out, ob), ranked(types[0]).get_element_type())]


def check_winograd(op: Conv2dOp, db: int, kb: tuple[int, int], ob: int, w: Sequence[int]) -> None:
    """What a Winograd F(2x2, 3x3) conv2d needs (see Conv2dOp), as a ShapeError."""
    kib, kob = kb
    if not (db and kob and ob) or kib != db or kob != ob:
        raise ShapeError(
            "algorithm 'winograd' needs blocked layouts NCHW<b>c, OIHW<b>i<b>o and NCHW<b>c with one block b, "
            f"got {op.data_layout}, {op.kernel_layout} and {op.out_layout}"
        )
    if len(w) != 6 or tuple(w[:2]) != (4, 4) or w[4] != kib or w[5] != kob:
        raise ShapeError(f"a winograd weight is [4, 4, O/{kob}, I/{kib}, {kib}, {kob}] (graph.winograd_weight), got {tuple(w)}")
    for name in ("strides", "dilations"):
        if any(v != 1 for v in window_value(op, name, 2, 1)):
            raise ShapeError(f"algorithm 'winograd' needs {name} 1, got {window_value(op, name, 2, 1)}")
    if op.groups != 1:
        raise ShapeError(f"algorithm 'winograd' needs groups 1, got {op.groups}")


@irdl_op_definition
class DenseOp(GraphOp):
    """x[..., K] @ w[N, K]^T (+ bias[N]) -> [..., N] (the weight is stored transposed,
    as ONNX Gemm with transB and TVM's dense).

    `weight_layout` "NK" (default), "KN" (a [K, N] weight, x @ w) or "NK64n" ([N/64,
    K, 64]: the KN weight cut into panels of 64 columns, what the GEMM's register
    tile reads; alter-layout packs constant weights into it)."""

    name = "graph.dense"
    traits = traits_def(Pure(), ComplexOutFusable())
    input = operand_def()
    weight = operand_def()
    bias = opt_operand_def()
    weight_layout = Enum(WeightLayoutAttr, default="NK")
    SYMBOLIC: ClassVar[bool] = True  # (the leading dimensions of x, a batch or a sequence, pass through)

    def infer(self, types):
        x, w = shape_of(types[0]), shape_of(types[1])
        layout = self.weight_layout
        nk = dense_weight_nk(w, layout)
        n, k = nk or (0, 0)
        if nk is None or not x or x[-1] != k:
            want = {"NK": "w[N, K]", "KN": "w[K, N]"}.get(layout, f"w[N/{PANEL}, K, {PANEL}]")
            raise ShapeError(f"dense needs x[..., K] and {want}, got {x} and {w}")
        if len(types) == 3 and shape_of(types[2]) != (n,):
            raise ShapeError(f"bias must have shape ({n},), got {shape_of(types[2])}")
        return [tensor((*x[:-1], n), ranked(types[0]).get_element_type())]


@irdl_op_definition
class MatmulOp(GraphOp):
    """numpy's matmul on the last two axes, batch axes broadcast (batch_matmul)."""

    name = "graph.matmul"
    traits = traits_def(Pure(), ComplexOutFusable())
    lhs = operand_def()
    rhs = operand_def()

    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        a, b = shape_of(types[0]), shape_of(types[1])
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            raise ShapeError(f"matmul needs [..., M, K] and [..., K, N], got {a} and {b}")
        batch = broadcast_shapes(a[:-2], b[:-2])
        return [tensor((*batch, a[-2], b[-1]), ranked(types[0]).get_element_type())]


def _layout_input(layout: str, x: Sequence[int], what: str) -> int:
    """The channel block of a pooling `layout` ("NCHW" or "NCHW<b>c"), checked
    against the input shape `x`."""
    block = layout_block(layout)
    if block and (len(x) != 5 or x[4] != block):
        raise ShapeError(f"{what} input {tuple(x)} is not in layout NCHW{block}c")
    if not block and len(x) != 4:
        raise ShapeError(f"{what} takes NCHW input, got rank {len(x)}")
    return block


class _Pool(GraphOp):
    """Pooling over 1 to 3 spatial axes (the names are the 2-D case they began
    with; `kernel`'s length is the spatial rank): `kernel`, `strides`, `pads`
    [begin..., end...], `dilations` (defaults: ones, zeros, ones), `ceil_mode`, and
    in 2-D `layout` "NCHW" (default) or "NCHW<b>c" ([N, C/b, H, W, b] in and out)."""
    input = operand_def()

    traits = traits_def(Pure(), ComplexOutFusable())
    kernel = Ints()
    strides = Ints(default=lambda op: (1,) * len(op.kernel))
    pads = Ints(default=lambda op: (0,) * 2 * len(op.kernel))
    dilations = Ints(default=lambda op: (1,) * len(op.kernel))
    ceil_mode = Bool(default=False)
    layout = Str(default="NCHW")
    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        x = shape_of(types[0])
        kernel = self.kernel
        rank = len(kernel)
        if not 1 <= rank <= 3:
            raise ShapeError(f"pooling windows have 1 to 3 axes, got kernel {list(kernel)}")
        if rank != 2 and self.layout != "NCHW":
            raise ShapeError(f"blocked layouts are 2-D, the kernel {list(kernel)} has {rank} axes")
        if rank == 2:
            _layout_input(self.layout, x, "pooling")
        elif len(x) != rank + 2:
            raise ShapeError(f"a {rank}-D pooling takes an input of rank {rank + 2}, got rank {len(x)}")
        strides = window_value(self, "strides", rank, 1)
        pads = window_value(self, "pads", rank, 0)
        dilations = window_value(self, "dilations", rank, 1)
        out = list(x)
        for axis, (k, s, lo, hi, d) in enumerate(zip(kernel, strides, pads[:rank], pads[rank:], dilations)):
            out[2 + axis] = pool_out(x[2 + axis], k, s, lo, hi, d, self.ceil_mode)
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class MaxPool2dOp(_Pool):
    name = "graph.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(_Pool):
    """Average pooling; `count_include_pad` as in ONNX."""

    name = "graph.avg_pool2d"
    count_include_pad = Bool(default=False)


@irdl_op_definition
class MaxPoolIndicesOp(_Pool):
    """Where max_pool2d finds each window's maximum (ONNX MaxPool's Indices): the
    first window position holding it, as an i64 index into the flattened input;
    `storage_order` 1 flattens the spatial axes column-major (N and C stay outer).
    Plain layout only."""

    name = "graph.max_pool_indices"
    storage_order = Int(default=0)

    def infer(self, types):
        if self.layout != "NCHW":
            raise ShapeError(f"max_pool_indices takes the plain layout, not {self.layout}")
        if self.storage_order not in (0, 1):
            raise ShapeError(f"storage_order must be 0 or 1, got {self.storage_order}")
        (out,) = super().infer(types)
        return [tensor(shape_of(out), i64)]


@irdl_op_definition
class GlobalAvgPool2dOp(GraphOp):
    """The mean over H and W; `layout` "NCHW" (default, [N, C, 1, 1] out) or
    "NCHW<b>c" ([N, C/b, 1, 1, b] out)."""

    name = "graph.global_avg_pool2d"
    input = operand_def()
    traits = traits_def(Pure(), Reduction())
    layout = Str(default="NCHW")
    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        x = shape_of(types[0])
        _layout_input(self.layout, x, "global pooling")
        return [tensor((x[0], x[1], 1, 1, *x[4:]), ranked(types[0]).get_element_type())]


@irdl_op_definition
class WinogradWeightOp(GraphOp):
    """The Winograd F(2x2, 3x3) transform G g G^T of a 3x3 conv weight in layout
    OIHW<i>i<o>o ([O/o, I/i, 3, 3, i, o]) -> [4, 4, O/o, I/i, i, o], the weight of a
    `graph.conv2d` with `algorithm = "winograd"`. Its operand is a known weight, so
    fold-constants computes it once, at compile time."""

    name = "graph.winograd_weight"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()

    def infer(self, types):
        w = shape_of(types[0])
        if len(w) != 6 or tuple(w[2:4]) != (3, 3):
            raise ShapeError(f"winograd_weight takes a 3x3 weight [O/o, I/i, 3, 3, i, o], got {w}")
        return [tensor((4, 4, w[0], w[1], w[4], w[5]), ranked(types[0]).get_element_type())]
