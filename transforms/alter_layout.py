"""alter-layout: run convolutions in the blocked layout NCHW<b>c, dense in KN.

TVM's AlterOpLayout with layout-transform cancellation, on the graph dialect.

**conv2d** (NCHW data, OIHW weight with a known value, groups 1, float32, output
channels a multiple of the block b = 16) becomes the fast blocked kernel of
topi/conv2d.py: `data_layout = "NCHW16c"` when the input channels are a multiple
of 16, else (fewer than 16 input channels, such as an image's 3) the input stays
NCHW and the kernel's in-block is all of them; `kernel_layout = "OIHW<i>i16o"`,
`out_layout = "NCHW16c"`. Channel counts that a block does not divide by a little
(padding them up to whole blocks adds at most `max-padding` percent: ShuffleNet-v2's
58, 116 and 232, a 1000-class conv's 1000) are padded, as onnxruntime's NCHWc
kernels do: the conv computes ceil(C/16) blocks with zero weights and bias on the
padded channels, so those hold zeros; NCHW values go in through `graph.pad` (zero
channels) and a transform, and come back through a transform and a `graph.slice`
of the first C channels (the crop), which cancel like the plain transforms. Ops
that map 0 to 0 (relu, add, mul, a clip holding 0, pooling, ...) keep the padded
value; others (sigmoid, div) and concats read the crop. Other channel counts take
the largest of b/2 = 8 and b/4 = 4 that divides them (MobileNet-v2's 24), for the
output (`NCHW8c`, `OIHW<i>i8o`) and the input (`NCHW8c`, in-block 8) alike: 4- and
8-lane vectors in the blocked kernel run several times faster than the unblocked
NCHW one (ShuffleNet-v2 at 224: 12.5 ms of kernels with blocks of 16 and 8, 9.3 ms
with 4 too). A depthwise conv (groups = input = output channels, a
multiple of 16: MobileNet's) is blocked too, with `kernel_layout = "OIHW1i16o"`:
each channel stays in its lane, so no transforms are needed around it; so is a
grouped conv whose groups are whole blocks of 16 input and 16 output channels
(ResNeXt's). Groups that cut 16-lane blocks (ShuffleNet v1's 34, 68 and 136
channels per group) take 16-lane blocks with a straddling kernel
(`kernel_layout = "straddle<C>c<O>o<i>i16o"`, see `straddle`: each 16-lane output
block computes its lanes of each group from that group's channels only) where an
output block holds at most two groups and that does at most 1.5x the useful
multiply-adds; then the whole network stays in 16-lane blocks, channel shuffles
included (ShuffleNet v1 at 224: 6.2 -> 4.1 ms of kernels, measured under load,
against 4- and 8-lane blocks, flattened rows and the transforms between them).
Other grouped convs take blocks of 8 or 4 where those divide the groups; groups
that cut even blocks of 4 stay NCHW, and a
1x1 one with stride 1 and no pads runs on its H x W pixels as one row
([N, C, 1, H * W] between two `graph.reshape`s), which the unblocked kernel
vectorizes with wider vectors than a row of W. The weight is packed once, here, into a new weight of the
module's store; a bias [O] becomes a `graph.add` of the bias reshaped to
[O/16, 1, 1, 16] (blocked convs take no bias; fuse-ops puts the add back into the
conv's kernel as its epilogue). Other convs are left as they are.

**Layout transforms** go at the boundaries: the blocked conv reads its input
through a `graph.layout_transform` NCHW -> NCHW16c, and its users read its result
through one NCHW16c -> NCHW. Ops in program order then pull the blocked value
through these transforms where the layout does not change their meaning:

- unary elementwise ops (relu, clip, sigmoid, cast, ...);
- binary broadcast ops (add, mul, ...) whose other operands are blocked values,
  full-shape tensors (transformed in), or known constants that broadcast along
  the channel axis (reshaped here: [C, 1, 1] -> [C/16, 1, 1, 16]) or not at all
  ([1, 1, H, W] -> [1, 1, H, W, 1]); the residual add of two blocked branches;
- max/avg pooling and global_avg_pool2d, given `layout = "NCHW16c"`;
- concat along the channels where every operand is whole blocks (DenseNet's,
  SqueezeNet's fire modules): along axis 1 of the blocked values, the blocks.

Anything else (reshape, flatten, dense, softmax, a conv left alone, the function's
results) reads the NCHW value of the transform back. A transform NCHW16c -> NCHW
followed by NCHW -> NCHW16c cancels; two transforms in a row compose into one;
transforms left without users are erased. A transform of a constant stays for
fold-constants (which runs after this pass) to fold.

**dense** with a known weight [N, K] gets `weight_layout = #graph<weight_layout KN>` and the weight
transposed into the store (the register-tiled GEMM reads KN rows as vectors), or,
where 64 divides N, `NK64n` and the weight packed into panels of 64 columns
([N/64, K, 64]: the tile streams a contiguous panel and no per-call copy is made),
with the option `kn-dense` (default true; `kn-dense=false` keeps NK). A GEMV (one row
of x: a classifier at batch 1) whose K splits into 16-lane vectors keeps NK: its
dot products stream each weight row once, where a KN row tile reads 64 columns
of every one of K rows N floats apart (1 x 4096 x 4096: 3.2 ms NK, 11.8 ms KN;
1 x 1280 x 1000, MobileNet-v2's: 86 vs 110 us, onnxruntime 83). So does a dense whose
N is not whole 16-lane vectors (and K is): a KN register tile would end in a masked
partial vector, and masked accumulators are not kept in registers but loaded and
stored on every step of K (32 x 1024 x N at N = 10, 20, 40, 100, 1000: 5.5, 11, 21,
56, 129 GFLOP/s KN against 67, 74, 98, 117, 145 NK; the MLP's 1024 -> 10 layer took
a fifth of its time). Measured here, the
KN GEMM of topi/dense.py (register tile 6 x 64, a packed K x 64 weight panel per
column block) runs BERT's layer in ~12 ms against ~16.5 ms for the NK dot products,
and the MLP of bench/models.py in ~1.0-1.2 ms against ~1.3-1.6 ms.

```mlir
%y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>
%r = graph.relu %y : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
%f = graph.flatten %r : (tensor<1x32x8x8xf32>) -> tensor<1x2048xf32>
```
becomes
```mlir
%t = graph.layout_transform %x {dst = "NCHW16c", src = "NCHW"} : (tensor<1x16x8x8xf32>) -> tensor<1x1x8x8x16xf32>
%w2 = graph.weight "conv.weight.OIHW16i16o" : tensor<2x1x3x3x16x16xf32>
%c = graph.conv2d %t, %w2 {data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", pads = ...} : ... -> tensor<1x2x8x8x16xf32>
%b2 = graph.weight "conv.bias.blocked" : tensor<2x1x1x16xf32>
%y2 = graph.add %c, %b2 : (tensor<1x2x8x8x16xf32>, tensor<2x1x1x16xf32>) -> tensor<1x2x8x8x16xf32>
%r2 = graph.relu %y2 : (tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
%p = graph.layout_transform %r2 {dst = "NCHW", src = "NCHW16c"} : (tensor<1x2x8x8x16xf32>) -> tensor<1x32x8x8xf32>
%f = graph.flatten %p : (tensor<1x32x8x8xf32>) -> tensor<1x2048xf32>
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilecraft.dialects.graph_reference import to_layout
from tilecraft.dialects import graph
from tilecraft.topi.conv2d import pack_conv2d_weight, pack_straddle_weight, unblocked_vector_width as vector_width
from tilecraft.topi.dense import LANES as DOT_LANES, pack_dense_weight
from tilecraft.dialects.graph_values import erase_if_dead, known_value, value_op
from tilecraft.utils.weights import WeightStore, pass_store

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


def _ranked(values) -> bool:
    return all(isinstance(v.type, TensorType) for v in values)


def padded(channels: int, block: int) -> int:
    """`channels` rounded up to whole blocks of `block`."""
    return -(-channels // block) * block


def channel_crop(op: Operation) -> bool:
    """`op` is a `graph.slice` keeping channels [0, C) of an NCHW value, all else whole."""
    if not isinstance(op, graph.SliceOp) or not _ranked([*op.inputs, *op.outputs]):
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


def _hint(value: SSAValue, suffix: str) -> str:
    owner = value.owner
    base = owner.weight_name.data if isinstance(owner, graph.WeightOp) else "alter_layout"
    return f"{base}.{suffix}"


@dataclass
class LayoutRewriter:
    """The rewrites of one function body, sharing the store and the transforms
    already made (a plain value read blocked by several ops is transformed once)."""

    store: WeightStore | None
    block: int
    kn_dense: bool = True
    max_padding: int = 0
    transforms: dict[tuple[SSAValue, int], SSAValue] = field(default_factory=dict)
    made: list[graph.LayoutTransformOp] = field(default_factory=list)

    # -- values in the blocked layout -------------------------------------------------

    def to_blocked(self, value: SSAValue, block: int, before: Operation) -> SSAValue:
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
                Rewriter.insert_op(pad, InsertPoint.before(before))
                src, layout = pad.outputs[0], "NCHW"
            op = graph.LayoutTransformOp([src], {"src": layout, "dst": blocked(block)})
            Rewriter.insert_op(op, InsertPoint.before(before))
            self.transforms[(value, block)] = op.outputs[0]
        return self.transforms[(value, block)]

    def replace_blocked(self, old: Operation, new_ops: list[Operation], result: SSAValue, block: int) -> None:
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
        Rewriter.replace_op(old, ends, [ends[-1].outputs[0]])
        erase_if_dead(operands)

    def new_value(self, array: np.ndarray, like: SSAValue, suffix: str) -> Operation:
        """A constant or store weight holding `array`, of `like`'s element type,
        named after `like` with `suffix`."""
        t = TensorType(like.type.get_element_type(), list(array.shape))
        return value_op(array, t, self.store, _hint(like, suffix))

    def blocked_constant(
        self, value: SSAValue, block: int, shape: tuple[int, ...], before: Operation
    ) -> SSAValue | None:
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
        Rewriter.insert_op(op, InsertPoint.before(before))
        return op.results[0]

    # -- rewrites -----------------------------------------------------------------------

    def conv2d(self, conv: graph.Conv2dOp) -> bool:
        """A plain conv2d in the blocked layouts; False (unchanged) where that is not
        supported or the weight is not known."""
        groups = conv.groups
        if conv.layouts() != (0, (0, 0), 0):
            return False
        x, w = conv.inputs[0], conv.inputs[1]
        if not isinstance(x.type.get_element_type(), Float32Type) or len(graph.shape_of(x.type)) != 4:
            return False  # (blocked layouts are 2-D)
        _, channels, _, _ = graph.shape_of(x.type)
        out_channels = graph.shape_of(w.type)[0]
        # Output channels in blocks of b; where b does not divide them, padded with
        # zero channels up to whole blocks when that adds few (ShuffleNet's 58, 116
        # and 232, a 1000-class 1x1 conv: see `pads`), else in blocks of b/2 or b/4
        # (MobileNet-v2's 24): narrower vectors in the blocked kernel still beat the
        # unblocked one several times.
        # Depthwise (one input and one output channel per group) keeps each channel
        # in its lane: the blocked kernel reads input block and lane = output's.
        depthwise = groups == channels == out_channels
        # Other groups run blocked where each is whole blocks of input and output
        # channels (ResNeXt's), so no block straddles two groups: groups that cut
        # blocks of 16 take blocks of 8 or 4 where those do not (never padded).
        grouped = groups != 1 and not depthwise
        if grouped and (groups <= 0 or channels % groups or out_channels % groups):
            return False
        if grouped:
            b = self.channel_block(math.gcd(channels // groups, out_channels // groups))
            if (b is None or b < self.block) and self.straddle(conv):
                return True
            if b is None:
                return self.flatten_pointwise(conv)
        else:
            b = self.block if self.pads(out_channels) else self.channel_block(out_channels)
        if b is None:
            return False
        # Input channels: in blocks as the output's are (padded likewise), or (fewer
        # than a block, an image's 3) all in the kernel's in-block with the data left NCHW.
        if depthwise or grouped:
            data_block = b
        else:
            data_block = self.block if self.pads(channels) else self.channel_block(channels)
        if data_block is None and channels >= self.block:
            return False
        weight = known_value(w, self.store, NAME)
        if weight is None:
            return False
        out_padded = padded(out_channels, b)
        in_padded = padded(channels, data_block) if data_block else channels
        if depthwise:
            weight = np.pad(weight, [(0, out_padded - out_channels), (0, 0), (0, 0), (0, 0)])
        else:  # zero weights from and to the padded channels
            weight = np.pad(weight, [(0, out_padded - out_channels), (0, in_padded - channels), (0, 0), (0, 0)])
        in_block = 1 if depthwise else data_block or channels
        kernel_layout = f"OIHW{in_block}i{b}o"
        packed = pack_conv2d_weight(weight, in_block, b)
        w_op = self.new_value(packed, w, kernel_layout)
        data, data_layout = (
            (self.to_blocked(x, data_block, conv), blocked(data_block)) if data_block else (x, "NCHW")
        )
        changes = {"groups": out_padded} if depthwise and out_padded != out_channels else {}
        new = conv.with_properties(
            [data, w_op.results[0]], data_layout=data_layout, kernel_layout=kernel_layout, out_layout=blocked(b), **changes
        )
        new_ops: list[Operation] = [w_op, new]
        result = new.outputs[0]
        if len(conv.inputs) == 3:
            result = self.add_blocked_bias(conv.inputs[2], result, out_channels, out_padded, b, new_ops)
        self.replace_blocked(conv, new_ops, result, b)
        return True

    def add_blocked_bias(self, bias: SSAValue, result: SSAValue, channels: int, padded_channels: int, b: int,
                         new_ops: list[Operation]) -> SSAValue:  # fmt: skip
        """`result` (NCHW<b>c) plus the conv's bias as [C/b, 1, 1, b] blocks (padded
        to `padded_channels`): the ops go to `new_ops`, the sum is returned."""
        shape = [padded_channels // b, 1, 1, b]
        known = known_value(bias, self.store, NAME)
        if known is not None:
            b_op = self.new_value(np.pad(known, (0, padded_channels - channels)).reshape(shape), bias, "blocked")
        elif padded_channels != channels:
            pad = graph.PadOp([bias], {"pads": [0, padded_channels - channels]})
            new_ops.append(pad)
            b_op = graph.ReshapeOp([pad.outputs[0]], {"shape": shape})
        else:
            b_op = graph.ReshapeOp([bias], {"shape": shape})
        add = graph.AddOp([result, b_op.results[0]])
        new_ops += [b_op, add]
        return add.outputs[0]

    def straddle(self, conv: graph.Conv2dOp) -> bool:
        """A grouped conv whose groups cut blocks of 16 (ShuffleNet v1's 34, 68 and
        136 channels per group) in 16-lane blocks with a straddling kernel
        ("straddle<C>c<O>o<i>i16o": topi/conv2d.py; each row reads exactly its
        group's channels, i = gcd(C/groups, 16) at a time), where an output block
        holds at most two groups and the rows do at most STRADDLE_WASTE times the
        useful multiply-adds: no 2-, 4- or 8-lane vectors and no layout transforms
        between 16-lane blocks and narrower ones. Channels the block does not
        divide are padded to whole blocks where `pads` allows it."""
        x, w = conv.inputs[0], conv.inputs[1]
        _, channels, _, _ = graph.shape_of(x.type)
        out_channels = graph.shape_of(w.type)[0]
        b = self.block
        if out_channels % b and not self.pads(out_channels) or any(d != 1 for d in conv.dilations):
            return False
        # The input in 16-lane blocks (padded as `pads` allows), else in the block its
        # channels take (ShuffleNet v1's first grouped conv reads 24 in 8-lane blocks).
        data_block = b if channels % b == 0 or self.pads(channels) else self.channel_block(channels)
        if data_block is None:
            return False
        sub = math.gcd(channels // conv.groups, data_block)
        try:
            rows = graph.straddle_rows(channels, out_channels, conv.groups, sub, b)
        except ValueError:
            return False
        # Output lanes computed per useful one: 1.18x for 68 per group (272 channels),
        # 1.41x for 34 (136 channels in 9 blocks), 1.06x for 136 (544 channels),
        # 1.43x for 28 (112 channels).
        if len(rows.group) * b > STRADDLE_WASTE * out_channels:
            return False
        weight = known_value(w, self.store, NAME)
        if weight is None:
            return False
        layout = f"straddle{channels}c{out_channels}o{sub}i{b}o"
        w_op = self.new_value(pack_straddle_weight(weight, channels, conv.groups, sub, b), w, layout)
        new = conv.with_properties(
            [self.to_blocked(x, data_block, conv), w_op.results[0]],
            data_layout=blocked(data_block), kernel_layout=layout, out_layout=blocked(b),
        )
        new_ops: list[Operation] = [w_op, new]
        result = new.outputs[0]
        out_padded = padded(out_channels, b)
        if len(conv.inputs) == 3:
            result = self.add_blocked_bias(conv.inputs[2], result, out_channels, out_padded, b, new_ops)
        self.replace_blocked(conv, new_ops, result, b)
        return True

    def flatten_pointwise(self, conv: graph.Conv2dOp) -> bool:
        """A 1x1 conv with stride 1 and no pads that stays NCHW (groups cut blocks
        of 4: ShuffleNet v1's 34 channels per group) on its H x W pixels as one row:
        the unblocked kernel vectorizes the output row, and a 28 x 28 row of 784
        takes 16-lane vectors where 28 took 4 (2-2.5x faster measured here). The
        reshapes are free where they fuse into the kernels around the conv."""
        x, w = conv.inputs[0], conv.inputs[1]
        n, channels, h, width = graph.shape_of(x.type)
        kernel = graph.shape_of(w.type)[2:]
        if h == 1 or tuple(kernel) != (1, 1) or any(s != 1 for s in conv.strides) or any(conv.pads):
            return False
        if vector_width(h * width) <= vector_width(width):
            return False
        row = graph.ReshapeOp([x], {"shape": [n, channels, 1, h * width]})
        new = conv.with_properties([row.outputs[0], *conv.inputs[1:]])
        out = graph.shape_of(conv.outputs[0].type)
        back = graph.ReshapeOp([new.outputs[0]], {"shape": list(out)})
        Rewriter.replace_op(conv, [row, new, back], [back.outputs[0]])
        return True

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

    def layout_agnostic(self, op: graph.GraphOp) -> bool:
        """An elementwise op or pooling with a blocked operand, on the blocked values."""
        out_shape = graph.shape_of(op.outputs[0].type)
        if len(op.outputs) != 1 or len(out_shape) != 4:
            return False
        sources = [unblocked_source(v) for v in op.inputs]
        blocks = {s[1] for s in sources if s is not None}
        if len(blocks) != 1:
            return False  # no blocked operand, or two different blocks
        (b,) = blocks
        if out_shape[1] % b and not keeps_zeros(op):
            return False  # (the padded channels of the operands must stay zero)
        if isinstance(op, POOLS):
            if op.layout != "NCHW":
                return False
            new = op.with_properties([sources[0][0]], layout=blocked(b))
        else:
            operands = []
            for v, source in zip(op.inputs, sources):
                if source is not None:
                    operands.append(source[0])
                    continue
                moved = self.blocked_constant(v, b, out_shape, op)
                if moved is None and graph.shape_of(v.type) == out_shape:
                    moved = self.to_blocked(v, b, op)
                if moved is None:
                    return False
                operands.append(moved)
            new = op.with_properties(operands)
        self.replace_blocked(op, [new], new.outputs[0], b)
        return True

    def concat(self, op: graph.ConcatOp) -> bool:
        """A channel concat of blocked values on their blocks (axis 1 of NCHW<b>c is
        the channel blocks), where every operand is whole blocks; plain operands
        are transformed in."""
        out_shape = graph.shape_of(op.outputs[0].type)
        if len(out_shape) != 4 or op.axis % 4 != 1:
            return False
        sources = [unblocked_source(v) for v in op.inputs]
        blocks = {s[1] for s in sources if s is not None}
        if len(blocks) != 1:
            return False
        (b,) = blocks
        if any(graph.shape_of(v.type)[1] % b for v in op.inputs):
            return False
        operands = [s[0] if s is not None else self.to_blocked(v, b, op) for v, s in zip(op.inputs, sources)]
        new = op.with_properties(operands, axis=1)
        self.replace_blocked(op, [new], new.outputs[0], b)
        return True

    def dense(self, dense: graph.DenseOp) -> bool:
        """A dense with a known NK weight reads it as KN, unless it is a GEMV or its
        N is not whole vectors (see the module docstring)."""
        if dense.weight_layout != graph.WeightLayout.NK:
            return False
        w = dense.inputs[1]
        x_shape = dense.inputs[0].type.get_shape()
        n = w.type.get_shape()[0]
        if x_shape[-1] % DOT_LANES == 0 and (math.prod(x_shape[:-1]) == 1 or n % DOT_LANES):
            return False
        weight = known_value(w, self.store, NAME)
        if weight is None:
            return False
        layout = graph.WeightLayout.NK64n if weight.shape[0] % graph.PANEL == 0 else graph.WeightLayout.KN
        w_op = self.new_value(pack_dense_weight(weight, layout), w, str(layout))
        operands = [dense.inputs[0], w_op.results[0], *dense.inputs[2:]]
        new = dense.with_properties(operands, weight_layout=layout)
        Rewriter.replace_op(dense, [w_op, new])
        erase_if_dead([w])
        return True

    def compose(self, op: graph.LayoutTransformOp) -> bool:
        """A transform of a transform: one transform, or none when they cancel."""
        inner = op.inputs[0].owner
        if not isinstance(inner, graph.LayoutTransformOp):
            return False
        src, dst = inner.src, op.dst
        if src == dst:
            Rewriter.replace_op(op, [], [inner.inputs[0]])
        else:
            Rewriter.replace_op(op, graph.LayoutTransformOp([inner.inputs[0]], {"src": src, "dst": dst}))
        if not inner.outputs[0].uses:
            Rewriter.erase_op(inner)
        return True

    def rewrite(self, op: Operation) -> bool:
        if not isinstance(op, graph.GraphOp) or not _ranked([*op.operands, *op.results]):
            return False
        if isinstance(op, graph.Conv2dOp):
            return self.conv2d(op)
        if isinstance(op, graph.DenseOp):
            return self.kn_dense and self.dense(op)
        if isinstance(op, graph.LayoutTransformOp):
            return self.compose(op)
        if isinstance(op, graph.ConcatOp):
            return self.concat(op)
        if isinstance(op, (*UNARY, *BINARY, *POOLS)):
            return self.layout_agnostic(op)
        return False

    def run(self, body: Block) -> None:
        for op in list(body.ops):
            if op.parent is not None:  # not erased by an earlier rewrite
                self.rewrite(op)
        # Transforms back to NCHW that every user cancelled.
        for back in reversed(self.made):
            if back.parent is not None and not back.outputs[0].uses:
                Rewriter.erase_op(back)


@dataclass(frozen=True)
class AlterLayoutPass(ModulePass):
    """Blocked NCHW<b>c convolutions (and what lies between them), KN dense weights."""

    name = "alter-layout"

    block: int = 16
    """Channels per block of the blocked layout (16 fp32 lanes: topi.conv2d's fast path)."""

    kn_dense: bool = True
    """Also give dense ops with known weights the KN weight layout (module docstring)."""

    max_padding: int = 13
    """Channels that the block does not divide are padded with zero channels up to
    whole blocks where that adds at most this percent of them, else take narrower
    blocks (module docstring); 0 never pads."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_padding < 0:
            raise PassFailedException(f"{NAME}: max-padding must not be negative, not {self.max_padding}")
        if self.block < 1:
            raise PassFailedException(f"{NAME}: block must be a positive number of channels, not {self.block}")
        store = pass_store(op, NAME)
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                LayoutRewriter(store, self.block, self.kn_dense, self.max_padding).run(f.body.block)
