"""The state alter-layout's patterns share: blocked layouts of values, the
transforms made so far, the module's weight store and the pass's options.

A value is blocked when it is read through a `graph.layout_transform` from
NCHW<b>c to NCHW (`unblocked_source`): a pattern that rewrites its user on the
blocked value reads past the transform, which then cancels
(`erase_unused_transforms`). A plain value that several ops read blocked is
transformed once (`LayoutState.to_blocked`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from tilecraft.dialects import graph
from tilecraft.dialects.graph_reference import to_layout
from tilecraft.dialects.graph_values import erase_if_dead, known_value, value_op
from tilecraft.utils.weights import WeightStore

NAME = "alter-layout"

# Ops whose meaning does not depend on the layout of their operands (elementwise).
UNARY = (
    graph.ReluOp, graph.SigmoidOp, graph.TanhOp, graph.ErfOp, graph.GeluOp, graph.ExpOp,
    graph.LogOp, graph.SqrtOp, graph.NegOp, graph.AbsOp, graph.ClipOp, graph.CastOp, graph.RequantizeOp,
)  # fmt: skip
BINARY = (
    graph.AddOp, graph.SubOp, graph.MulOp, graph.DivOp, graph.PowOp, graph.MaximumOp, graph.MinimumOp,
)  # fmt: skip
# Ops that take a `layout` attribute and pool over H and W in any of them.
POOLS = (graph.MaxPool2dOp, graph.AvgPool2dOp, graph.GlobalAvgPool2dOp)


STRADDLE_WASTE = 1.5  # the most multiply-adds a straddling kernel may do per useful one


def blocked(block: int) -> str:
    return f"NCHW{block}c"


def ranked(values) -> bool:
    return all(isinstance(v.type, TensorType) for v in values)


def padded(channels: int, block: int) -> int:
    """`channels` rounded up to whole blocks of `block`."""
    return -(-channels // block) * block


def channel_crop(op: Operation) -> bool:
    """`op` is a `graph.slice` keeping channels [0, C) of an NCHW value, all else whole."""
    if not isinstance(op, graph.SliceOp) or not ranked([*op.inputs, *op.outputs]):
        return False
    shape = graph.shape_of(op.inputs[0].type)
    if len(shape) != 4:
        return False
    ranges = op.ranges(shape)
    return ranges[1][0] == 0 and ranges[1][2] == 1 and all(r == (0, n, 1) for d, (r, n) in enumerate(zip(ranges, shape)) if d != 1)


def unblocked_source(value: SSAValue) -> tuple[SSAValue, int] | None:
    """(x, b) when `value` is `graph.layout_transform x` from NCHW<b>c to NCHW, or
    the channels [0, C) of one where x holds C padded up to whole blocks."""
    op = value.owner
    crop = channel_crop(op)
    if crop:
        op = op.inputs[0].owner
    if not isinstance(op, graph.LayoutTransformOp) or op.dst != "NCHW":
        return None
    try:
        block = graph.layout_block(op.src)
    except graph.ShapeError:
        return None
    if not block:
        return None
    if crop and graph.shape_of(op.outputs[0].type)[1] != padded(graph.shape_of(value.type)[1], block):
        return None  # cropped by more than the padding of the last block
    return op.inputs[0], block


def is_padded(value: SSAValue, source: tuple[SSAValue, int] | None) -> bool:
    """`value` is the crop of a blocked value with padded channels (`source`)."""
    return source is not None and graph.shape_of(value.type)[1] % source[1] != 0


# Ops that map zeros to zeros: the padded channels of a blocked value stay zero
# through them (clip where its range holds 0), so a conv reading the value (zero
# weights on those channels) or a crop never sees anything but zeros there.
ZERO_UNARY = (graph.ReluOp, graph.TanhOp, graph.ErfOp, graph.GeluOp, graph.NegOp, graph.AbsOp, graph.SqrtOp)
ZERO_BINARY = (graph.AddOp, graph.SubOp, graph.MulOp, graph.MaximumOp, graph.MinimumOp)


def keeps_zeros(op: Operation) -> bool:
    if isinstance(op, graph.ClipOp):
        return (op.min is None or op.min <= 0) and (op.max is None or op.max >= 0)
    return isinstance(op, (*ZERO_UNARY, *ZERO_BINARY, *POOLS))


def hint(value: SSAValue, suffix: str) -> str:
    owner = value.owner
    base = owner.weight_name.data if isinstance(owner, graph.WeightOp) else "alter_layout"
    return f"{base}.{suffix}"


@dataclass
class LayoutState:
    """What the patterns of one function body share: the store, the options, and
    the transforms already made (a plain value read blocked by several ops is
    transformed once)."""

    store: WeightStore | None
    block: int
    kn_dense: bool = True
    max_padding: int = 0
    transforms: dict[tuple[SSAValue, int], SSAValue] = field(default_factory=dict)
    made: list[graph.LayoutTransformOp] = field(default_factory=list)

    def to_blocked(self, value: SSAValue, block: int, before: Operation, rewriter: PatternRewriter) -> SSAValue:
        """`value` (NCHW) in NCHW<block>c: the blocked value a transform back came
        from (cancellation), or a new transform inserted before `before`."""
        source = unblocked_source(value)
        if source is not None and source[1] == block:
            return source[0]
        if (value, block) not in self.transforms:
            channels = graph.shape_of(value.type)[1]
            src, layout = (source[0], blocked(source[1])) if source and not is_padded(value, source) else (value, "NCHW")
            if channels % block:  # zeros up to whole blocks
                extra = padded(channels, block) - channels
                pad = graph.PadOp([value], {"pads": [0, 0, 0, 0, 0, extra, 0, 0]})
                rewriter.insert(pad, InsertPoint.before(before))
                src, layout = pad.outputs[0], "NCHW"
            op = graph.LayoutTransformOp([src], {"src": layout, "dst": blocked(block)})
            rewriter.insert(op, InsertPoint.before(before))
            self.transforms[(value, block)] = op.outputs[0]
        return self.transforms[(value, block)]

    def replace_blocked(self, old: Operation, new_ops: list[Operation], result: SSAValue, block: int, rewriter: PatternRewriter) -> None:
        """Replace `old` (NCHW result) by `new_ops` computing `result` in NCHW<block>c;
        its users read it through a transform back to NCHW (and a crop of the
        channels where `result` pads them to whole blocks), which cancels against
        the transforms of users that are rewritten later."""
        back = graph.LayoutTransformOp([result], {"src": blocked(block), "dst": "NCHW"})
        self.made.append(back)
        ends = [*new_ops, back]
        channels = graph.shape_of(old.results[0].type)[1]
        if graph.shape_of(back.outputs[0].type)[1] != channels:
            crop = graph.SliceOp([back.outputs[0]], {"starts": [0], "ends": [channels], "axes": [1]})
            self.made.append(crop)
            ends.append(crop)
        operands = list(old.operands)
        rewriter.replace(old, ends, [ends[-1].outputs[0]])
        erase_if_dead(operands, rewriter)

    def new_value(self, array: np.ndarray, like: SSAValue, suffix: str) -> Operation:
        """A constant or store weight holding `array`, of `like`'s element type,
        named after `like` with `suffix`."""
        t = TensorType(like.type.get_element_type(), list(array.shape))
        return value_op(array, t, self.store, hint(like, suffix))

    def blocked_constant(
        self, value: SSAValue, block: int, shape: tuple[int, ...], before: Operation
    , rewriter: PatternRewriter) -> SSAValue | None:
        """A known constant that broadcasts against NCHW `shape`, reshaped to
        broadcast the same way against its blocked form; None if it is not known
        or broadcasts along the channel axis in part only."""
        array = known_value(value, self.store, NAME)
        if array is None or array.ndim > 4:
            return None
        if array.ndim == 0:
            return value  # a scalar broadcasts the same in any layout
        full = array.reshape((1,) * (4 - array.ndim) + array.shape)
        try:
            if graph.broadcast_shapes(full.shape, shape) != shape:
                return None
        except graph.ShapeError:
            return None
        if full.shape[1] == 1:
            moved = full[..., None]  # [n, 1, h, w] -> [n, 1, h, w, 1]
        else:  # zeros in the channels that pad the last block
            extra = padded(full.shape[1], block) - full.shape[1]
            moved = to_layout(np.pad(full, [(0, 0), (0, extra), (0, 0), (0, 0)]), "NCHW", blocked(block))
        moved = moved.reshape(moved.shape[4 - array.ndim :])  # the leading 1s it had not
        op = self.new_value(moved, value, "blocked")
        rewriter.insert(op, InsertPoint.before(before))
        return op.results[0]

    # -- rewrites -----------------------------------------------------------------------

    def pads(self, channels: int) -> bool:
        """Whether `channels` that the block does not divide are padded up to whole
        blocks: when that adds at most `max_padding` percent (58 -> 64, 1000 ->
        1008; not 24 -> 32), and never for fewer channels than a block."""
        if channels % self.block == 0 or channels < self.block:
            return False
        return (padded(channels, self.block) - channels) * 100 <= self.max_padding * channels

    def channel_block(self, channels: int) -> int | None:
        """The block for `channels`: the pass's block where it divides them, else the
        largest of its halvings (down to 4 lanes) that does, else None."""
        b = self.block
        while b >= 4 or b == self.block:
            if channels % b == 0:
                return b
            b //= 2
        return None

    def erase_unused_transforms(self) -> None:
        """Erase the transforms back to NCHW that every user cancelled."""
        for back in reversed(self.made):
            if back.parent is not None and not back.outputs[0].uses:
                Rewriter.erase_op(back)
