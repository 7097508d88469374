"""The `graph` dialect: a model as a dataflow graph of tensor operators (Relay-like).

Each op takes and returns ranked tensors; its attributes follow ONNX's meaning
(NCHW convolutions, pads as [begin..., end...]). Every op

- declares its attributes as typed properties with their defaults
  (`strides = Ints(default=(1, 1), length=2)`, read as `op.strides`); the verifier
  rejects an unknown or misspelled attribute, naming it and the closest property;
- declares its fusion kind as a trait (`Injective`, `Broadcast`, `Reduction`,
  `ComplexOutFusable`, `Opaque`), which is all `fuse-ops` looks at;
- infers its result types from its operands (`infer`), which the verifier checks
  and `infer-shapes` applies, so a shape error is reported at the op.
- has canonicalization patterns (identities removed, batch_norm folded) and a
  folder (an op on constants computes its value), applied by xDSL's `canonicalize`
  and by `fold-constants`; their bodies live in `dialects/graph_canonicalization.py`
  and `graph_folders.py`.

```mlir
func.func @main(%x: tensor<1x3x32x32xf32> {tc.name = "x"}) -> tensor<1x8x32x32xf32> {
  %w = graph.weight "conv.weight" : tensor<8x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  %r = graph.relu %y : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  func.return %r : tensor<1x8x32x32xf32>
}
```

Weights do not bloat the text: `graph.weight "name"` refers to an array in a side
file (a `.npz` named by the module's `graph.weights` attribute, or a store held in
memory while compiling); small constants are inline `graph.constant`s.
A fused group (`graph.fused`) holds its ops in an isolated region.

The package: `op.py` (the op base, `GraphOp`), `properties.py` (typed properties,
enum attributes), `traits.py` (fusion kinds, canonicalization and folding hooks),
`shapes.py` (shape helpers of `infer`), and the ops by family: `elementwise.py`,
`nn.py` (conv2d, dense, matmul, pooling), `reductions.py` (and normalizations),
`movement.py`, `structure.py` (constants, weights, fused groups). Every name of
theirs is a name of this package: `graph.Conv2dOp`, `graph.shape_of`.
"""

from __future__ import annotations

from xdsl.ir import Dialect, Operation

from tilecraft.dialects.graph.traits import *
from tilecraft.dialects.graph.shapes import *
from tilecraft.dialects.graph.properties import *
from tilecraft.dialects.graph.op import *
from tilecraft.dialects.graph.elementwise import *
from tilecraft.dialects.graph.nn import *
from tilecraft.dialects.graph.reductions import *
from tilecraft.dialects.graph.movement import *
from tilecraft.dialects.graph.structure import *

from tilecraft.dialects.graph.elementwise import LOGIC_OPS, MATH_OPS

GRAPH_OPS: list[type[Operation]] = [
    ReluOp, SigmoidOp, TanhOp, ErfOp, GeluOp, ExpOp, LogOp, SqrtOp, NegOp, AbsOp, ClipOp, CastOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, WhereOp,
    EqualOp, LessOp, GreaterOp, BroadcastToOp,
    Conv2dOp, WinogradWeightOp, DenseOp, MatmulOp, MaxPool2dOp, AvgPool2dOp, MaxPoolIndicesOp, GlobalAvgPool2dOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, SoftmaxOp, LayerNormOp, BatchNormOp,
    PadOp, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, ConcatOp, SplitOp, SliceOp, GatherOp,
    LayoutTransformOp, ConstantOp, WeightOp, FusedOp, YieldOp,
    ReduceMinOp, ReduceProdOp, CumulativeOp, GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp,
]  # fmt: skip

GRAPH_OPS += LOGIC_OPS
GRAPH_OPS += MATH_OPS
GRAPH_OPS += [BitcastOp, RequantizeOp]

GRAPH = Dialect(
    "graph",
    GRAPH_OPS,
    [ApproximateAttr, WeightLayoutAttr, ConvAlgorithmAttr, ScatterReductionAttr, CumulativeKindAttr],
    [GraphConstantMaterialization()],
)
