"""partition-accel: the int8 layers the accelerator computes whole become calls of
functions marked for it; the rest of the graph stays for the CPU.

In a quantized graph (what `quantize-int8` makes), a chain

    requantize(relu?(conv2d|dense(cast<i32>(x : i8), cast<i32>(w : i8, known), bias : i32 known?)))

is one accelerator kernel: GEMMs on int8 inputs and weights into int32, then bias,
relu and the requantization on its ALU, and an int8 result. `OutlineAccelChain`
moves each such chain (with the weights it reads) into a private graph function
`@accel_<n>` marked `{tc.target = "accel"}` and calls it in its place. What fits:
a 2-D NCHW conv2d without groups or dilation, or a 2-D dense (run as a 1x1
convolution), whose channels fill the GEMM's blocks and whose batch fills its
BATCH rows (the spec's; VTA's default when `spec` is empty). Anything else, and
every float op, stays where it is. `tc.compile(model, target="accel")` runs this
pass, then the marked functions on the accelerator and the code between the calls
on the CPU (runtime/offload.py), so what `tilecraft-opt -p partition-accel` prints is
what runs.

```mlir
%q = graph.cast %x {to = i32} ...; %w = graph.cast %w8 {to = i32} ...
%a = graph.conv2d %q, %w, %b ...
%r = graph.relu %a ...; %y = graph.requantize %r {shift = 7 : i64, to = i8} ...
```
becomes `%y = func.call @accel_0(%x) : (tensor<1x16x8x8xi8>) -> tensor<1x16x8x8xi8>`
and `func.func private @accel_0(...) attributes {tc.target = "accel"} { ... }`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, IntegerType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value, store_near

NAME = "partition-accel"
TARGET_ATTR = "tc.target"


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


def _int(value: SSAValue, width: int) -> bool:
    element = graph.ranked(value.type).get_element_type()
    return isinstance(element, IntegerType) and element.width.data == width


def _single_use(value: SSAValue) -> bool:
    return sum(1 for _ in value.uses) == 1


def match_chain(requantize: Operation, spec: AccelSpec) -> Chain | None:
    """The accelerator chain that ends at `requantize`, if it is one (see the module doc)."""
    if not isinstance(requantize, graph.RequantizeOp) or not _int(requantize.outputs[0], 8):
        return None
    ops: list[Operation] = [requantize]
    value = requantize.inputs[0]
    relu = False
    if isinstance(value.owner, graph.ReluOp) and _single_use(value):
        relu = True
        ops.append(value.owner)
        value = value.owner.inputs[0]
    anchor = value.owner
    if isinstance(anchor, graph.DenseOp):
        if anchor.weight_layout != graph.WeightLayout.NK or len(graph.shape_of(anchor.inputs[0].type)) != 2:
            return None
    elif not isinstance(anchor, graph.Conv2dOp) or anchor.layouts() != (0, (0, 0), 0):
        return None
    if not _single_use(value):
        return None
    x_cast, w_cast = anchor.input.owner, anchor.weight.owner
    if not isinstance(x_cast, graph.CastOp) or not isinstance(w_cast, graph.CastOp):
        return None
    x, w = x_cast.input, w_cast.input
    if not (_int(x, 8) and _int(w, 8) and _int(anchor.outputs[0], 32)):
        return None
    store = store_near(requantize, NAME)
    weight = known_value(w, store, NAME)
    bias = known_value(anchor.bias, store, NAME) if anchor.bias is not None else None
    if weight is None or (anchor.bias is not None and bias is None):
        return None
    shape = graph.shape_of(x.type)
    dense = isinstance(anchor, graph.DenseOp)
    if dense:
        weight = weight.reshape(*weight.shape, 1, 1)
        strides, pads = (1, 1), (0, 0, 0, 0)
    elif len(shape) != 4 or anchor.groups != 1 or any(d != 1 for d in anchor.dilations):
        return None
    else:
        strides, pads = tuple(anchor.strides), tuple(anchor.pads)
    if shape[0] % spec.batch or shape[1] % spec.block or weight.shape[0] % spec.block:
        return None
    ops.append(anchor)
    ops += [cast for cast in (x_cast, w_cast) if _single_use(cast.outputs[0])]
    return Chain(ops, x, requantize.outputs[0], weight, bias, strides, pads, requantize.shift, relu, dense)


@dataclass
class OutlineAccelChain(RewritePattern):
    spec: AccelSpec
    module: ModuleOp
    count: list[int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.RequantizeOp, rewriter: PatternRewriter, /) -> None:
        parent = op.parent_op()
        if isinstance(parent, func.FuncOp) and TARGET_ATTR in parent.attributes:
            return  # already a kernel
        chain = match_chain(op, self.spec)
        if chain is None:
            return
        inside = set(chain.ops)
        body = Block(arg_types=[chain.x.type])
        mapping: dict[SSAValue, SSAValue] = {chain.x: body.args[0]}
        for o in reversed(chain.ops):  # producers first
            for v in o.operands:
                if v not in mapping and v.owner not in inside:  # a weight or bias: copied in
                    clone = v.owner.clone()
                    body.add_op(clone)
                    mapping[v] = clone.results[0]
            clone = o.clone(value_mapper=mapping)
            body.add_op(clone)
            mapping.update(zip(o.results, clone.results))
        body.add_op(func.ReturnOp(mapping[chain.result]))
        name = f"accel_{self.count[0]}"
        self.count[0] += 1
        kernel = func.FuncOp(name, FunctionType.from_lists([chain.x.type], [chain.result.type]), Region(body),
                             visibility="private")
        kernel.attributes[TARGET_ATTR] = StringAttr("accel")
        rewriter.insert(kernel, InsertPoint.at_end(self.module.body.block))
        call = func.CallOp(name, [chain.x], [chain.result.type])
        rewriter.replace(op, call)
        for o in chain.ops[1:]:
            if all(False for _ in o.results[0].uses):
                rewriter.erase(o)


@dataclass(frozen=True)
class PartitionAccelPass(ModulePass):
    """Outline every accelerator chain into a `{tc.target = "accel"}` function."""

    name = NAME

    spec: str = ""  # the accelerator spec file; VTA's default when empty

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        spec = load_spec(self.spec) if self.spec else default_spec()
        count = [sum(1 for f in op.ops if isinstance(f, func.FuncOp) and TARGET_ATTR in f.attributes)]
        PatternRewriteWalker(OutlineAccelChain(spec, op, count), apply_recursively=False).rewrite_module(op)
        from xdsl.transforms.dead_code_elimination import region_dce

        for f in op.ops:
            if isinstance(f, func.FuncOp) and TARGET_ATTR not in f.attributes and not f.is_declaration:
                region_dce(f.body)
