"""partition-accel: the int8 layers the accelerator computes whole become calls of
functions marked for it; the rest of the graph stays for the CPU.

In a quantized graph (what `quantize-int8` makes), a chain

    requantize(relu?(conv2d|dense(cast<i32>(x : i8), cast<i32>(w : i8, known), bias : i32 known?)))

is one accelerator kernel: GEMMs on int8 inputs and weights into int32, then bias,
relu and the requantization on its ALU, and an int8 result. `OutlineAccelChain`
moves each such chain (with the weights it reads) into a private graph function
`@accel_<n>` marked `{tc.target = "accel"}` and calls it in its place. What fits
is `fit_chain`'s test (analysis/accel_fit.py: a 2-D conv2d or dense whose channels
fill the GEMM's blocks, whose pads fit LOAD's fields, whose smallest tile fits the
buffers, ...), which the accelerability analysis reports with the reason for each
op it refuses; anything else, and every float op, stays where it is.
`tc.compile(model, target="accel")` runs this pass, then the marked functions on
the accelerator and the code between the calls on the CPU (runtime/offload.py), so
what `tilecraft-opt -p partition-accel` prints is what runs.

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

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from tilecraft.analysis.accel_fit import NAME, TARGET_ATTR, Chain, fit_chain, is_int, single_use
from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.dialects import graph


def match_chain(requantize: Operation, spec: AccelSpec) -> Chain | None:
    """The accelerator chain that ends at `requantize`, if it is one (see the module doc)."""
    if not isinstance(requantize, graph.RequantizeOp) or not is_int(requantize.outputs[0], 8):
        return None
    value = requantize.inputs[0]
    if isinstance(value.owner, graph.ReluOp) and single_use(value):
        value = value.owner.inputs[0]
    found = fit_chain(value.owner, spec) if isinstance(value.owner, Operation) else None
    return found if isinstance(found, Chain) and found.result is requantize.outputs[0] else None


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

        def copy_in(v: SSAValue) -> None:
            """A value from outside the chain (a weight, a bias, a cast of the input
            another chain reads too), copied in with what it is computed from."""
            if v in mapping:
                return
            producer = v.owner
            assert isinstance(producer, Operation)
            for operand in producer.operands:
                copy_in(operand)
            clone = producer.clone(value_mapper=mapping)
            body.add_op(clone)
            mapping.update(zip(producer.results, clone.results))

        for o in reversed(chain.ops):  # producers first
            for v in o.operands:
                if v.owner not in inside:
                    copy_in(v)
            clone = o.clone(value_mapper=mapping)
            body.add_op(clone)
            mapping.update(zip(o.results, clone.results))
        body.add_op(func.ReturnOp(mapping[chain.result]))
        name = f"accel_{self.count[0]}"
        self.count[0] += 1
        kernel = func.FuncOp(
            name, FunctionType.from_lists([chain.x.type], [chain.result.type]), Region(body), visibility="private"
        )
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
        partition(op, load_spec(self.spec) if self.spec else default_spec())


def partition(op: ModuleOp, spec: AccelSpec) -> None:
    """What the pass does, for a spec given as an object (`tc.compile(..., target="accel")`'s)."""
    count = [sum(1 for f in op.ops if isinstance(f, func.FuncOp) and TARGET_ATTR in f.attributes)]
    PatternRewriteWalker(OutlineAccelChain(spec, op, count), apply_recursively=False).rewrite_module(op)
    from xdsl.transforms.dead_code_elimination import region_dce

    for f in op.ops:
        if isinstance(f, func.FuncOp) and TARGET_ATTR not in f.attributes and not f.is_declaration:
            region_dce(f.body)
