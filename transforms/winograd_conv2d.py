"""winograd-conv2d: run 3x3 convolutions as Winograd F(2x2, 3x3) where it pays.

Winograd's minimal filtering (Lavin and Gray, 2016) computes a 2x2 output tile of a
3x3 conv from a 4x4 input tile with 16 multiplies per input channel instead of 36:
the input tile and the kernel are transformed (V = B^T d B, U = G g G^T), multiplied
elementwise and summed over the input channels (16 GEMMs, one per tile position),
and the products transformed back (Y = A^T M A). topi/winograd.py has the kernel.

A `graph.conv2d` qualifies when it is what alter-layout makes of a 3x3 conv:
blocked data, kernel and output layouts with one channel block (NCHW<b>c,
OIHW<b>i<b>o, NCHW<b>c), a float32 weight [O/b, C/b, 3, 3, b, b] that is known (a
`graph.weight` or `graph.constant`), strides and dilations 1 and groups 1. It gets
`algorithm = "winograd"` and reads `graph.winograd_weight` of its weight, which
fold-constants (the next pass of compile-model) folds into a new weight of the
store, so the weight transform happens once, at compile time:

```mlir
%y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c",
    kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"}
    : (tensor<1x4x28x28x16xf32>, tensor<4x4x3x3x16x16xf32>) -> tensor<1x4x28x28x16xf32>
```
becomes
```mlir
%u = graph.winograd_weight %w : (tensor<4x4x3x3x16x16xf32>) -> tensor<4x4x4x4x16x16xf32>
%y = graph.conv2d %x, %u {pads = ..., ..., algorithm = "winograd"}
    : (tensor<1x4x28x28x16xf32>, tensor<4x4x4x4x16x16xf32>) -> tensor<1x4x28x28x16xf32>
```

Where it pays: measured on this machine (2 threads, ResNet-18's 3x3 layers), the
Winograd kernel ran 1.3-2x faster than the direct one at 56x56, 28x28 and 14x14
outputs and about even at 7x7 with 512 channels, where the 16 MB transformed
weight makes the GEMMs memory-bound. So the pass converts convs with at least
`min-outputs` output pixels per image (default 196 = 14x14); `min-outputs=0`
converts every qualifying conv. A tuning context (tc.compile's `tuning_log`)
decides instead where its config of the conv's workload sets the `algorithm`
knob of topi's conv2d template (topi/conv2d.py `conv2d_space`). Winograd changes the rounding (its transforms add
and subtract up to 16 terms): relative errors around 1e-6 of the output's scale
against the direct conv in float32.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import is_known
from tilecraft.topi.common import te_dtype
from tilecraft.topi.tuning import config_for
from tilecraft.topi.winograd import WINOGRAD_MIN_OUTPUTS

NAME = "winograd-conv2d"


def qualifies(conv: graph.Conv2dOp) -> bool:
    """Whether `conv` can run as Winograd F(2x2, 3x3) (see the module docstring)."""
    if conv.algorithm != "direct" or conv.bias is not None or conv.groups != 1:
        return False
    x, w = conv.input.type, conv.weight.type
    if not all(isinstance(t, TensorType) and not any(d < 0 for d in t.get_shape()) for t in (x, w)):
        return False
    if not isinstance(w.get_element_type(), Float32Type) or not is_known(conv.weight):
        return False
    try:
        db, (kib, kob), ob = conv.layouts()
    except graph.ShapeError:
        return False
    if not db or kib != db or kob != db or ob != db:
        return False
    shape = tuple(w.get_shape())
    if len(shape) != 6 or shape[2:4] != (3, 3):
        return False
    return tuple(conv.strides) == (1, 1) and tuple(conv.dilations) == (1, 1)


def conv2d_params(conv: graph.Conv2dOp) -> tuple:
    """The workload parameters topi's conv2d compute records for this conv (the
    key of its tuning-log records: template "conv2d")."""
    x, w = conv.input.type, conv.weight.type
    assert isinstance(x, TensorType) and isinstance(w, TensorType)
    return (
        list(x.get_shape()), list(w.get_shape()), list(conv.strides), list(conv.pads), list(conv.dilations),
        conv.groups, conv.data_layout, conv.kernel_layout, conv.out_layout, te_dtype(x), te_dtype(w),
    )  # fmt: skip


def output_pixels(conv: graph.Conv2dOp) -> int:
    out = conv.outputs[0].type
    assert isinstance(out, TensorType)
    return out.get_shape()[2] * out.get_shape()[3]


@dataclass
class WinogradConv2d(RewritePattern):
    """A qualifying conv2d reads `graph.winograd_weight` of its weight and gets
    `algorithm = "winograd"` when the tuning context's config of its workload says
    so (`algorithm` knob of topi's conv2d template: a tuning log's best record), or,
    without one, when it has at least `min_outputs` output pixels."""

    min_outputs: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.Conv2dOp, rewriter: PatternRewriter) -> None:
        if not qualifies(op):
            return
        config = config_for("conv2d", conv2d_params(op))
        if config is not None:
            # (a config without the knob is a direct schedule's: its schedule
            # then checks it, naming what is wrong with it)
            wanted = config.get("algorithm") == "winograd"
        else:
            wanted = output_pixels(op) >= self.min_outputs
        if not wanted:
            return
        x, w = op.inputs
        weight = graph.WinogradWeightOp([w])
        weight.outputs[0].name_hint = f"{w.name_hint}.winograd" if w.name_hint else None
        conv = op.with_properties([x, weight.outputs[0]], algorithm="winograd")
        rewriter.replace(op, [weight, conv])


@dataclass(frozen=True)
class WinogradConv2dPass(ModulePass):
    """Winograd F(2x2, 3x3) for the blocked 3x3 convs where it pays."""

    name = NAME

    min_outputs: int = WINOGRAD_MIN_OUTPUTS
    """Convert convs with at least this many output pixels per image (OH x OW); 0
    converts every qualifying conv."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_outputs < 0:
            raise PassFailedException(f"{NAME}: min-outputs must not be negative, not {self.min_outputs}")
        PatternRewriteWalker(
            GreedyRewritePatternApplier([WinogradConv2d(self.min_outputs)]), apply_recursively=False
        ).rewrite_module(op)
