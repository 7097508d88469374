"""alter-layout: run convolutions in the blocked layout NCHW<b>c, dense in KN.

TVM's AlterOpLayout with layout-transform cancellation, on the graph dialect: one
pattern per op kind (`conv2d.py`, `dense.py`; `propagate.py` for the elementwise
ops, pooling, concats and transforms that carry blocked values on), sharing the
state of `layouts.py`, applied once over a function's ops in program order.

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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.utils.exceptions import PassFailedException

from tilecraft.transforms.alter_layout.conv2d import BlockConv2d
from tilecraft.transforms.alter_layout.dense import KnDense
from tilecraft.transforms.alter_layout.layouts import NAME, LayoutState
from tilecraft.transforms.alter_layout.propagate import BlockConcat, BlockElementwise, ComposeTransforms
from tilecraft.utils.weights import pass_store


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
                state = LayoutState(store, self.block, self.kn_dense, self.max_padding)
                patterns = [BlockConv2d(state), BlockElementwise(state), BlockConcat(state), ComposeTransforms()]
                if self.kn_dense:
                    patterns.append(KnDense(state))
                # Once over the ops in program order: a rewritten op's users see its
                # blocked value when their turn comes; the ops made are not visited.
                walker = PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False)
                walker.rewrite_region(f.body)
                state.erase_unused_transforms()
