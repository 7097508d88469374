"""Which int8 conv2d and dense chains the accelerator computes whole, and why not
the others: the one test `partition-accel` (transforms/partition_accel.py) outlines
by and the `accelerability` analysis (analysis/accelerability.py) reports, so the
two never disagree.

A chain is `requantize(relu?(conv2d|dense(cast<i32>(x : i8), cast<i32>(w : i8,
known), bias : i32 known?)))`. What fits: a 2-D NCHW conv2d without groups or
dilation, or a 2-D dense (run as a 1x1 convolution), whose channels fill the GEMM's
blocks and whose batch fills its BATCH rows (the spec's), whose pads fit LOAD's
4-bit pad fields (at most 15) and whose smallest tile (one output pixel, one
channel block) fits the input, weight and accumulator buffers. A conv's stride is
no field of the ISA (it scales micro-op indices into the input buffer), so it
limits nothing beyond the buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, SSAValue

from tilecraft.backends.accel.isa import PAD_BITS
from tilecraft.backends.accel.spec import AccelSpec, buffer_use
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value, store_near

NAME = "partition-accel"  # (the pass; the weight store's diagnostics name it)
TARGET_ATTR = "tc.target"  # (marks a function partition-accel outlined)
MAX_PAD = (1 << PAD_BITS) - 1  # LOAD pads a tile by at most this many rows or columns a side


@dataclass
class Chain:
    """One accelerator chain: its ops (last first), input and result, and what the
    kernel needs to know about it."""

    ops: list[Operation]
    x: SSAValue  # the int8 input
    result: SSAValue  # the int8 output of requantize
    weight: np.ndarray  # [O, C, KH, KW] (a dense's [O, K] as [O, K, 1, 1])
    bias: np.ndarray | None
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    shift: int
    relu: bool
    dense: bool = False  # run as a 1x1 convolution of [N, K, 1, 1]

    def input_shape(self) -> tuple[int, ...]:
        shape = tuple(graph.shape_of(self.x.type))
        return (*shape, 1, 1) if self.dense else shape


def _element(value: SSAValue) -> str:
    return str(graph.ranked(value.type).get_element_type())


def is_int(value: SSAValue, width: int) -> bool:
    element = graph.ranked(value.type).get_element_type()
    return isinstance(element, IntegerType) and element.width.data == width


def single_use(value: SSAValue) -> bool:
    return sum(1 for _ in value.uses) == 1


def _users(value: SSAValue) -> str:
    names = sorted({use.operation.name for use in value.uses})
    return ", ".join(names) if names else "nothing"


def _int8_cast(value: SSAValue) -> bool:
    """`value` is `graph.cast<i32>` of an int8 value."""
    cast = value.owner
    return isinstance(cast, graph.CastOp) and is_int(cast.input, 8) and is_int(value, 32)


def _quantized(anchor: graph.Conv2dOp | graph.DenseOp) -> str | None:
    """Why `anchor` is not an int8 x int8 -> int32 GEMM (quantize-int8's form), or None."""
    what = anchor.name.removeprefix("graph.")
    if not isinstance(graph.ranked(anchor.outputs[0].type).get_element_type(), IntegerType):
        return f"{what} on {_element(anchor.outputs[0])}: not quantized to int8 (tc.quantize makes int8 chains)"
    for role, value in (("input", anchor.input), ("weight", anchor.weight)):
        if not _int8_cast(value):
            source = value.owner.input if isinstance(value.owner, graph.CastOp) else value
            return f"its {role} is {_element(source)}, not an int8 value cast to i32"
    if not is_int(anchor.outputs[0], 32):
        return f"it accumulates in {_element(anchor.outputs[0])}, not i32"
    return None


def _geometry(anchor: graph.Conv2dOp | graph.DenseOp, spec: AccelSpec) -> str | None:
    """Why the GEMM intrinsic cannot compute `anchor`'s shape at `spec`, or None."""
    x, w = graph.shape_of(anchor.input.type), graph.shape_of(anchor.weight.type)
    if any(d < 0 for d in (*x, *w)):
        return f"a dynamic shape {x} (an accelerator program is built for one shape)"
    if isinstance(anchor, graph.DenseOp):
        if anchor.weight_layout != graph.WeightLayout.NK or len(x) != 2:
            return f"a dense of a {len(x)}-D input or a packed weight (the accelerator takes [N, K] x [O, K])"
        dims = (("batch", x[0], "BATCH", spec.batch), ("input features", x[1], "BLOCK_IN", spec.block),
                ("output features", w[0], "BLOCK_OUT", spec.block))  # fmt: skip
    else:
        if anchor.layouts() != (0, (0, 0), 0):
            return f"a blocked layout (data {anchor.data_layout}, kernel {anchor.kernel_layout}): analyze it as written"
        if len(x) != 4:
            return f"a {len(x) - 2}-D convolution (the accelerator's is 2-D)"
        if anchor.groups != 1:
            kind = "depthwise" if anchor.groups == x[1] == w[0] else "grouped"
            return f"{kind} (groups {anchor.groups}): the GEMM intrinsic reduces over all input channels"
        if any(d != 1 for d in anchor.dilations):
            return f"dilation {tuple(anchor.dilations)}: the accelerator's windows are dense"
        if max(anchor.pads) > MAX_PAD:
            return f"padding {tuple(anchor.pads)} beyond LOAD's {PAD_BITS}-bit pad fields (at most {MAX_PAD})"
        dims = (("batch", x[0], "BATCH", spec.batch), ("input channels", x[1], "BLOCK_IN", spec.block),
                ("output channels", w[0], "BLOCK_OUT", spec.block))  # fmt: skip
    for what, size, key, block in dims:
        if size % block:
            return f"{what} {size} not a multiple of {key} {block}"
    if isinstance(anchor, graph.Conv2dOp):
        smallest = {"tile_h": 1, "tile_w": 1, "tile_oc": 1, "tile_ic": 1, "threads": 1}
        use = buffer_use(x, w, tuple(anchor.strides), smallest, spec)
        for buffer, (needed, held) in use.items():
            if needed > held:
                return f"even a 1x1-pixel tile needs {needed} {buffer} elements; the spec's buffer holds {held}"
    return None


def _requantize_after(anchor: Operation) -> tuple[list[Operation], str | None]:
    """The relu (if any) and requantize that end the chain of `anchor`, or why none does."""
    value = anchor.results[0]
    ops: list[Operation] = []
    if not single_use(value):
        return ops, f"its int32 result goes to {_users(value)}, not only to a requantize to int8"
    user = next(iter(value.uses)).operation
    if isinstance(user, graph.ReluOp):
        if not single_use(user.outputs[0]):
            return ops, f"its relu's result goes to {_users(user.outputs[0])}, not only to a requantize to int8"
        ops.append(user)
        user = next(iter(user.outputs[0].uses)).operation
    if not isinstance(user, graph.RequantizeOp) or not is_int(user.outputs[0], 8):
        return ops, (f"its int32 result goes to {user.name}, not a requantize to int8 "
                     "(the accelerator's output buffer is 8 bits wide)")  # fmt: skip
    return [user, *reversed(ops)], None


def fit_chain(anchor: Operation, spec: AccelSpec) -> Chain | str:
    """The accelerator chain of the conv2d or dense `anchor` (see the module doc), or
    why the accelerator cannot compute it: the first of its dtype, its kind, its
    shape against the spec's BATCH and BLOCK, LOAD's pad fields, the smallest tile
    against the buffers, the requantization after it, its weights."""
    if not isinstance(anchor, graph.Conv2dOp | graph.DenseOp):
        return f"the accelerator has no kernel for {anchor.name} (it runs conv2d and dense)"
    reason = _quantized(anchor) or _geometry(anchor, spec)
    if reason:
        return reason
    ops, reason = _requantize_after(anchor)
    if reason:
        return reason
    store = store_near(anchor, NAME)
    x_cast, w_cast = anchor.input.owner, anchor.weight.owner
    assert isinstance(x_cast, graph.CastOp) and isinstance(w_cast, graph.CastOp)
    weight = known_value(w_cast.input, store, NAME)
    if weight is None:
        return "its weight is not known when compiling (a constant, or a weight of the model's store)"
    bias = known_value(anchor.bias, store, NAME) if anchor.bias is not None else None
    if anchor.bias is not None and bias is None:
        return "its bias is not known when compiling (a constant, or a weight of the model's store)"
    requantize = ops[0]
    assert isinstance(requantize, graph.RequantizeOp)
    dense = isinstance(anchor, graph.DenseOp)
    if dense:
        weight = weight.reshape(*weight.shape, 1, 1)
        strides, pads = (1, 1), (0, 0, 0, 0)
    else:
        strides, pads = tuple(anchor.strides), tuple(anchor.pads)
    ops = [*ops, anchor, *(cast for cast in (x_cast, w_cast) if single_use(cast.outputs[0]))]
    relu = len(ops) > 1 and isinstance(ops[1], graph.ReluOp)
    return Chain(ops, x_cast.input, requantize.outputs[0], weight, bias, strides, pads, requantize.shift, relu, dense)


def accel_reason(op: Operation, spec: AccelSpec) -> str | None:
    """None when partition-accel outlines `op`'s chain for the accelerator, else why
    not (the accelerability analysis's verdict: the same test)."""
    found = fit_chain(op, spec)
    return found if isinstance(found, str) else None
