"""The `myplugin` dialect: `myplugin.scaled_relu` and how it lowers to te.

```mlir
%y = myplugin.scaled_relu %x {alpha = 2.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
```
computes `alpha * max(x, 0)` elementwise. Subclassing `graph.GraphOp` makes it a
graph-level op (tensors in, tensors out, shapes from `infer`); its `Injective`
trait lets fuse-ops put it in the group of the op that produces its operand.
"""

from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, traits_def
from xdsl.traits import Pure

import tilecraft as tc
from tilecraft.dialects import graph
from tilecraft.frontends import te


@irdl_op_definition
class ScaledReluOp(graph.GraphOp):
    """`alpha * max(x, 0)`, elementwise."""

    name = "myplugin.scaled_relu"
    input = operand_def()  # its operands, by name, as IRDL declares them
    # A typed property: `op.alpha` is a Python float; a misspelled or missing
    # attribute is a diagnostic naming it.
    alpha = graph.Float()
    traits = traits_def(Pure(), graph.Injective())

    def __init__(self, x: SSAValue, alpha: float):
        super().__init__([x], {"alpha": alpha})

    def infer(self, types):
        return [graph.ranked(types[0])]


MYPLUGIN = Dialect("myplugin", [ScaledReluOp])


@tc.register_strategy(ScaledReluOp)
def scaled_relu_compute(op: ScaledReluOp, inputs: list[te.Tensor], constants: list):
    """The te compute of one scaled_relu; being injective it needs no schedule of
    its own (the group's schedule inlines it)."""
    (x,) = inputs
    alpha = op.alpha
    return te.compute(x.shape, lambda *i: te.maximum(x[i], 0.0) * alpha, name="scaled_relu")
