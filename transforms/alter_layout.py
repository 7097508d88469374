"""alter-layout: run convolutions in the blocked layout NCHW<b>c, dense in KN.

TVM's AlterOpLayout with layout-transform cancellation, on the graph dialect.

**conv2d** (NCHW data, OIHW weight with a known value, groups 1, float32, output
channels a multiple of the block b = 16) becomes the fast blocked kernel of
topi/conv2d.py: `data_layout = "NCHW16c"` when the input channels are a multiple
of 16, else (fewer than 16 input channels, such as an image's 3) the input stays
NCHW and the kernel's in-block is all of them; `kernel_layout = "OIHW<i>i16o"`,
`out_layout = "NCHW16c"`. Channel counts that a block does not divide take the largest
of b/2 = 8 and b/4 = 4 that does (MobileNet-v2's 24, ShuffleNet-v2's 116 and 232,
a 1000-class 1x1 conv), for the output (`NCHW8c`, `OIHW<i>i8o`) and the input
(`NCHW8c`, in-block 8) alike: 4- and 8-lane vectors in the blocked kernel run
several times faster than the unblocked NCHW one (ShuffleNet-v2 at 224: 12.5 ms
of kernels with blocks of 16 and 8, 9.3 ms with 4 too). A depthwise conv (groups = input = output channels, a
multiple of 16: MobileNet's) is blocked too, with `kernel_layout = "OIHW1i16o"`:
each channel stays in its lane, so no transforms are needed around it; so is a
grouped conv whose groups are whole blocks of 16 input and 16 output channels
(ResNeXt's). Groups that cut blocks stay NCHW. The weight is packed once, here, into a new weight of the
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
transposed into the store (the register-tiled GEMM reads KN rows as vectors), with
the option `kn-dense` (default true; `kn-dense=false` keeps NK). Measured here, the
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
from tilecraft.topi.conv2d import pack_conv2d_weight
from tilecraft.topi.dense import pack_dense_weight
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


def blocked(block: int) -> str:
    return f"NCHW{block}c"


def _ranked(values) -> bool:
    return all(isinstance(v.type, TensorType) for v in values)


def unblocked_source(value: SSAValue) -> tuple[SSAValue, int] | None:
    """(x, b) when `value` is `graph.layout_transform x` from NCHW<b>c to NCHW."""
    op = value.owner
    if not isinstance(op, graph.LayoutTransformOp) or op.dst != "NCHW":
        return None
    try:
        block = graph.layout_block(op.src)
    except graph.ShapeError:
        return None
    return (op.inputs[0], block) if block else None


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
            src, layout = (source[0], blocked(source[1])) if source else (value, "NCHW")
            op = graph.LayoutTransformOp([src], {"src": layout, "dst": blocked(block)})
            Rewriter.insert_op(op, InsertPoint.before(before))
            self.transforms[(value, block)] = op.outputs[0]
        return self.transforms[(value, block)]

    def replace_blocked(self, old: Operation, new_ops: list[Operation], result: SSAValue, block: int) -> None:
        """Replace `old` (NCHW result) by `new_ops` computing `result` in NCHW<block>c;
        its users read it through a transform back to NCHW, which cancels against
        the transforms of users that are rewritten later."""
        back = graph.LayoutTransformOp([result], {"src": blocked(block), "dst": "NCHW"})
        self.made.append(back)
        operands = list(old.operands)
        Rewriter.replace_op(old, [*new_ops, back], [back.outputs[0]])
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
        else:
            moved = to_layout(full, "NCHW", blocked(block))
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
        # Output channels in blocks of b, or of b/2 or b/4 where b does not divide
        # them (a 1000-class 1x1 conv, MobileNet-v2's 24, ShuffleNet's 116 channels):
        # narrower vectors in the blocked kernel beat the unblocked one several times.
        # Depthwise (one input and one output channel per group) keeps each channel
        # in its lane: the blocked kernel reads input block and lane = output's.
        depthwise = groups == channels == out_channels
        # Other groups run blocked where each is whole blocks of input and output
        # channels (ResNeXt's), so no block straddles two groups: groups that cut
        # blocks of 16 take blocks of 8 or 4 where those do not.
        grouped = groups != 1 and not depthwise
        if grouped and (groups <= 0 or channels % groups or out_channels % groups):
            return False
        b = self.channel_block(math.gcd(channels // groups, out_channels // groups) if grouped else out_channels)
        if b is None:
            return False
        # Input channels: in blocks as the output's are, or (fewer than a block, an
        # image's 3) all in the kernel's in-block with the data left NCHW.
        data_block = b if depthwise or grouped else self.channel_block(channels)
        if data_block is None and channels >= self.block:
            return False
        weight = known_value(w, self.store, NAME)
        if weight is None:
            return False
        in_block = 1 if depthwise else data_block or channels
        kernel_layout = f"OIHW{in_block}i{b}o"
        packed = pack_conv2d_weight(weight, in_block, b)
        w_op = self.new_value(packed, w, kernel_layout)
        data, data_layout = (
            (self.to_blocked(x, data_block, conv), blocked(data_block)) if data_block else (x, "NCHW")
        )
        new = conv.with_properties(
            [data, w_op.results[0]], data_layout=data_layout, kernel_layout=kernel_layout, out_layout=blocked(b)
        )
        new_ops: list[Operation] = [w_op, new]
        result = new.outputs[0]
        if len(conv.inputs) == 3:
            bias = conv.inputs[2]
            shape = [out_channels // b, 1, 1, b]
            known = known_value(bias, self.store, NAME)
            if known is not None:
                b_op = self.new_value(known.reshape(shape), bias, "blocked")
            else:
                b_op = graph.ReshapeOp([bias], {"shape": shape})
            add = graph.AddOp([result, b_op.results[0]])
            new_ops += [b_op, add]
            result = add.outputs[0]
        self.replace_blocked(conv, new_ops, result, b)
        return True

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
        if out_shape[1] % b:
            return False
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
        """A dense with a known NK weight reads it as KN."""
        if dense.weight_layout != graph.WeightLayout.NK:
            return False
        w = dense.inputs[1]
        weight = known_value(w, self.store, NAME)
        if weight is None:
            return False
        w_op = self.new_value(pack_dense_weight(weight), w, "KN")
        operands = [dense.inputs[0], w_op.results[0], *dense.inputs[2:]]
        new = dense.with_properties(operands, weight_layout=graph.WeightLayout.KN)
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block < 1:
            raise PassFailedException(f"{NAME}: block must be a positive number of channels, not {self.block}")
        store = pass_store(op, NAME)
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                LayoutRewriter(store, self.block, self.kn_dense).run(f.body.block)
