"""scale-relus: every `graph.relu` becomes `myplugin.scaled_relu` with the pass's
`alpha`.

```mlir
%y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
```
with `-p 'scale-relus{alpha=2.0}'` becomes
```mlir
%y = myplugin.scaled_relu %x {alpha = 2.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
```
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from tilecraft.dialects import graph

from myplugin.dialect import ScaledReluOp


@dataclass
class ReluToScaledRelu(RewritePattern):
    alpha: float

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter):
        rewriter.replace(op, ScaledReluOp(op.inputs[0], self.alpha))


@dataclass(frozen=True)
class ScaleRelusPass(ModulePass):
    """Rewrite every graph.relu into myplugin.scaled_relu{alpha}."""

    name = "scale-relus"

    alpha: float = 1.0
    """The factor the rewritten relus scale by; must be positive."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alpha <= 0:
            raise PassFailedException(f"scale-relus: alpha must be positive, got {self.alpha}")
        PatternRewriteWalker(ReluToScaledRelu(self.alpha)).rewrite_module(op)
