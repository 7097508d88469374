"""`instrument-counters`: a counter in every block of a loop-level program.

Each function gets one more argument, `%tc_counters : memref<Nxi64>` (N: the
blocks of the module), which every call passes on; block k (in the order
`analysis/loop_counts.py` numbers them: functions in module order, each one's
blocks in pre-order) starts by adding one to element k. After a run the buffer
holds how often each block ran; what a block does per run (its FLOPs, MACs and
bytes per buffer) is in its ops, so the two give loop trip counts, guards
taken, MACs and bytes moved per buffer as they happened (`CompiledModel.counters`,
`tilecraft-analyze --dynamic`). Without this pass nothing of it is in the IR.

A counter is a load, an add and a store, one iteration at a time, so the pass
makes vectorized, parallel and virtual-thread loops serial: the counts are
those of the same iterations, the instrumented build is slower (measured in
bench/analysis.py). It runs on the loop program as it executes — after
`lower-tensor-intrin` and `expand-dma`, before `loop-outline-parallel` — and
refuses a `loop.tensor_intrin`, `loop.dma` or `loop.launch`, naming it.

```mlir
loop.for %i = 0 to 4 {
  memref.store %x, %A[%i] : memref<4xf32>
}
```
becomes (in `@f`, whose entry block is counter 0)
```mlir
loop.for %i = 0 to 4 {
  %k = arith.constant 1 : index
  %c = memref.load %tc_counters[%k] : memref<2xi64>
  ...
  memref.store %n, %tc_counters[%k] : memref<2xi64>
  memref.store %x, %A[%i] : memref<4xf32>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilecraft.analysis.loop_counts import block_order, functions
from tilecraft.dialects import loop
from tilecraft.utils.diagnostics import OpError

COUNTERS = "tc_counters"
# What must be lowered first, and by which pass.
_BEFORE = {
    loop.TensorIntrinOp: "run lower-tensor-intrin first",
    loop.DmaOp: "run expand-dma first",
    loop.LaunchOp: "instrument before loop-outline-parallel",
}


def instrument(module: ModuleOp) -> list[str]:
    """Add the counters to `module` in place; returns each counter's label
    (`@function: block`), which the module also records as `tc.counters`."""
    for op in module.walk():
        for kind, why in _BEFORE.items():
            if isinstance(op, kind):
                raise OpError(op, f"instrument-counters: {op.name} is not a loop nest yet; {why}")
    order = block_order(module)
    counters_type = MemRefType(i64, [len(order)])
    argument: dict[str, SSAValue] = {f.sym_name.data: _add_argument(f, counters_type) for f in functions(module)}
    for op in list(module.walk()):
        if isinstance(op, func.CallOp) and op.callee.string_value() in argument:
            caller = op.parent_op()
            while not isinstance(caller, func.FuncOp):
                assert caller is not None
                caller = caller.parent_op()
            new = func.CallOp(op.callee, [*op.arguments, argument[caller.sym_name.data]], list(op.result_types))
            new.attributes |= op.attributes
            Rewriter.replace_op(op, new)
        elif isinstance(op, loop.ForOp) and op.kind.data in (loop.LoopKind.VECTORIZED, loop.LoopKind.PARALLEL,
                                                              loop.LoopKind.VTHREAD):  # fmt: skip
            op.kind = loop.LoopKindAttr(loop.LoopKind.SERIAL)
    labels = []
    for k, (f, block, label) in enumerate(order):
        _count(block, argument[f.sym_name.data], k)
        labels.append(f"@{f.sym_name.data}: {label}")
    module.attributes["tc.counters"] = ArrayAttr([StringAttr(s) for s in labels])
    return labels


def _add_argument(f: func.FuncOp, counters_type: MemRefType) -> SSAValue:
    block = f.body.block
    counters = block.insert_arg(counters_type, len(block.args))
    counters.name_hint = COUNTERS
    inputs = [*f.function_type.inputs.data, counters_type]
    f.function_type = FunctionType.from_lists(inputs, list(f.function_type.outputs.data))
    if f.arg_attrs is not None:
        f.arg_attrs = ArrayAttr([*f.arg_attrs.data, DictionaryAttr({"tc.name": StringAttr(COUNTERS)})])
    return counters


def _count(block: Block, counters: SSAValue, k: int) -> None:
    index = arith.ConstantOp(IntegerAttr(k, IndexType()))
    old = memref.LoadOp.get(counters, [index.result])
    one = arith.ConstantOp(IntegerAttr(1, i64))
    new = arith.AddiOp(old.res, one.result)
    store = memref.StoreOp.get(new.result, counters, [index.result])
    Rewriter.insert_op([index, old, one, new, store], InsertPoint.at_start(block))


@dataclass(frozen=True)
class InstrumentCountersPass(ModulePass):
    """Count how often every block runs (see the module docstring)."""

    name = "instrument-counters"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        instrument(op)
