"""`lower-tensor-intrin`: a `loop.tensor_intrin` becomes its intrinsic's loop nest.

The CPU lowering of a tensor intrinsic is its own compute written as loops
(`LoopKernel`, the intrinsic's "llvm" lowering): one `loop.for` per intrinsic
axis, in the kernel's order and with its loop kinds, around the te body with
each `te.read` of input `X` turned into a `memref.load` of the region's buffer
at `base + index` (the intrinsic's indices go to the buffer's trailing
dimensions) and the result combined into the output region. `loop-unroll` and
`loop-vectorize`, which run next in `loop-to-llvm`, then make the micro-kernel:
with the default kernel (innermost spatial axis vectorized, the others unrolled)
the 4x16x8 float GEMM tile is 32 vector FMAs on 4 accumulator rows.

```mlir
loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i0, %k0], %B[%k0, %j0]) outs(%C[%i0, %j0])
    : memref<64x32xf32>, memref<32x64xf32>, memref<64x64xf32>
```
becomes
```mlir
loop.for %i = 0 to 4 unrolled {
  loop.for %k = 0 to 8 unrolled {
    loop.for %j = 0 to 16 vectorized {
      %a = memref.load %A[%i0 + %i, %k0 + %k] ...      (arith.addi of base and index)
      %b = memref.load %B[%k0 + %k, %j0 + %j] ...
      %p = arith.mulf %a, %b : f32
      %c = memref.load %C[%i0 + %i, %j0 + %j] ...
      %s = arith.addf %c, %p : f32
      memref.store %s, %C[%i0 + %i, %j0 + %j] ...
    }
  }
}
```
The option `target` picks the lowering ("llvm", the default); an intrinsic
without one for that target is an error at the op.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.dialects import loop, te
from tilecraft.dialects.tensor_intrin import LoopKernel, TensorIntrin, lookup
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

PASS = "lower-tensor-intrin"


class _Body:
    """Appends ops to the innermost loop of the nest being built."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.block.last_op)
        return op


def kernel_nest(
    intrin: TensorIntrin, kernel: LoopKernel, regions: list[tuple[SSAValue, list[SSAValue]]]
) -> loop.ForOp | None:
    """The loop nest computing `intrin` on `regions` (inputs, then the output)."""
    ext = intrin.extents()
    var: dict[str, SSAValue] = {}
    outer: loop.ForOp | None = None
    block: Block | None = None
    for name in kernel.loop_order(intrin):
        for_op = loop.ForOp(0, ext[name], kernel.kind(intrin, name), var_name=name)
        if block is None:
            outer = for_op
        else:
            block.insert_op_before(for_op, block.last_op)
        block = for_op.body.block
        var[name] = for_op.var
    assert outer is not None and block is not None, "an intrinsic has at least one axis"
    body = _Body(block)
    compute = intrin.compute
    reduce = compute.reduce
    mapping: dict[SSAValue, SSAValue] = dict(
        zip(compute.body.block.args, (var[n] for n in intrin.spatial_names))
    )
    if reduce is not None:
        mapping.update(zip(reduce.body.block.args, (var[n] for n in intrin.reduce_names)))
    args = list(intrin.function.body.block.args)

    sums: dict[tuple[SSAValue, SSAValue], SSAValue] = {}

    def address(region, indices: list[SSAValue]) -> list[SSAValue]:
        """The buffer indices of an intrinsic index: base + index in the trailing
        dimensions (each sum built once)."""
        base = region[1]
        lead = len(base) - len(indices)
        for b, i in zip(base[lead:], indices):
            if (b, i) not in sums:
                sums[(b, i)] = body.add(arith.AddiOp(b, i)).result
        return base[:lead] + [sums[(b, i)] for b, i in zip(base[lead:], indices)]

    def clone_block(ops) -> None:
        for op in ops:
            if isinstance(op, (te.YieldOp, te.ReduceOp)):
                continue
            if isinstance(op, te.ReadOp):
                region = regions[args.index(op.tensor)]
                idx = address(region, [mapping.get(i, i) for i in op.indices])
                mapping[op.result] = body.add(memref.LoadOp.get(region[0], idx)).res
            else:
                body.add(op.clone(value_mapper=mapping))

    clone_block(compute.body.block.ops)
    out_buf = regions[-1][0]
    out_idx = address(regions[-1], [var[n] for n in intrin.spatial_names])
    if reduce is None:
        value = mapping[compute.yielded]
    else:
        clone_block(reduce.body.block.ops)
        acc = body.add(memref.LoadOp.get(out_buf, out_idx)).res
        value = body.add(te.reduce_combine(reduce.kind.data, acc, mapping[reduce.yielded])).results[0]
    body.add(memref.StoreOp.get(value, out_buf, out_idx))
    return outer


@dataclass
class LowerTensorIntrin(RewritePattern):
    """A `loop.tensor_intrin` becomes the loop nest of its intrinsic's lowering for
    `target` (see the module docstring)."""

    target: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.TensorIntrinOp, rewriter: PatternRewriter) -> None:
        intrin = lookup(op.intrin.data)
        assert intrin is not None, "loop.tensor_intrin verifies its intrinsic"
        kernel = intrin.lowering(self.target)
        if not isinstance(kernel, LoopKernel):
            has = ", ".join(sorted(intrin.lowerings)) or "none"
            raise OpError(
                op,
                f"{PASS}: tensor intrinsic '{intrin.name}' has no loop-kernel lowering for "
                f"target '{self.target}' (its lowerings: {has})",
            )
        rewriter.replace(op, [kernel_nest(intrin, kernel, op.operand_regions())], [])


@dataclass(frozen=True)
class LowerTensorIntrinPass(ModulePass):
    """Write every `loop.tensor_intrin` as its intrinsic's loop nest for `target`."""

    name = "lower-tensor-intrin"

    target: str = "llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerTensorIntrin(self.target), apply_recursively=False).rewrite_module(op)
