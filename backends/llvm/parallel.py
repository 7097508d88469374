"""Outlining a parallel `loop.for` into a task that runs one chunk of its iterations.

A parallel loop `loop.for %i = lb to ub parallel { body }` in function `@f`
becomes three pieces:

```
llvm.func internal @f_parallel0_body(%A: !llvm.ptr {llvm.noalias}, ..., %begin: i64, %end: i64)
    // for %i in [begin, end): body           -- the captured values are parameters
llvm.func internal @f_parallel0(%ctx: !llvm.ptr, %chunk: i32, %chunks: i32)
    // unpack the captures from the context struct %ctx, take iterations
    // [lb + chunk * n / chunks, lb + (chunk + 1) * n / chunks), call the body
@f: // store the captures into a context struct on the stack, then
    llvm.call @tilecraft_parallel_launch(@f_parallel0, %ctx)
```

The body is its own function, rather than part of the task, so that the buffers it
touches arrive as `noalias` parameters again: loaded out of a struct they would
be pointers LLVM knows nothing about, and it could not keep values in registers
across a store. (Distinct loop-level buffers never overlap, so `noalias` holds.)
Captured constants are not passed at all but made again inside the body, so
vectorization and unrolling still see them as constants.

The task only knows how to split: chunks are balanced (they differ by at most
one iteration) and contiguous, so the body's vectorized and unrolled code is the
same whatever the split. How many chunks there are and which thread runs which
is the runtime's decision (`runtime.py`: several chunks per thread, handed out
dynamically); a chunk may be empty when the loop has fewer iterations than
chunks, which the body's entry test covers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilecraft.backends.llvm.builder import PTR, FunctionBuilder
from tilecraft.backends.llvm.runtime import PARALLEL_LAUNCH
from tilecraft.dialects.loop import ForOp
from xdsl.dialects import llvm
from xdsl.dialects.builtin import UnitAttr, i32, i64
from xdsl.ir import Attribute, SSAValue

if TYPE_CHECKING:
    from tilecraft.lowering.convert_loop_to_llvm import FunctionLowering


def free_values(loop: ForOp) -> list[SSAValue]:
    """The values used inside `loop` but defined outside it, in order of first use."""
    inside: set[SSAValue] = set()
    for op in loop.walk():
        inside.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.args)
    used: dict[SSAValue, None] = {}
    for op in loop.walk():
        for operand in op.operands:
            if operand not in inside:
                used[operand] = None
    return list(used)


def outline_parallel_loop(outer: FunctionLowering, loop: ForOp, name: str) -> None:
    from tilecraft.lowering.convert_loop_to_llvm import FunctionLowering

    module = outer.module
    b = outer.b
    captured = free_values(loop)
    constants = [v for v in captured if outer.get(v) in b.known]
    passed = [v for v in captured if v not in constants]
    passed_values = [outer.get(v) for v in passed]
    types: list[Attribute] = [v.type for v in passed_values]  # type: ignore[union-attr]

    # The body: captures as parameters, then the iteration range.
    arg_attrs = [{"llvm.noalias": UnitAttr()} if t == PTR else {} for t in types]
    body_function = module.define(
        f"{name}_body", [*types, i64, i64], "internal", [*arg_attrs, {}, {}]
    )
    body = FunctionLowering(module, body_function, f"{name}_body", in_parallel=True)
    body.values.update(zip(passed, body.b.args))
    for value in constants:
        known = outer.get(value)
        body.values[value] = body.b.const(b.known[known], known.type)  # type: ignore[index, union-attr]
    begin, end = body.b.args[-2], body.b.args[-1]
    body.lower_serial(loop, begin, end, maybe_empty=True)
    body.b.add(llvm.ReturnOp())
    body.b.finish()

    # The task: unpack the context, compute the chunk's range, call the body.
    context_type = llvm.LLVMStructType.from_type_list(types)
    task_function = module.define(name, [PTR, i32, i32], "internal")
    task = FunctionBuilder(task_function)
    context, chunk, chunks = task.args
    unpacked = []
    for field, field_type in enumerate(types):
        pointer = task.add(llvm.GEPOp(context, [0, field], context_type))
        unpacked.append(task.add(llvm.LoadOp(pointer, field_type)))
    chunk64 = task.add(llvm.ZExtOp(chunk, i64))
    chunks64 = task.add(llvm.ZExtOp(chunks, i64))
    extent = task.index(loop.extent)

    def chunk_start(c: SSAValue) -> SSAValue:
        start = task.add(llvm.UDivOp(task.imul(c, extent, nsw=True), chunks64))
        return task.iadd(start, task.index(loop.lb.data), nsw=True)

    next_chunk = task.iadd(chunk64, task.index(1), nsw=True)
    task.call(
        body_function.sym_name.data, [*unpacked, chunk_start(chunk64), chunk_start(next_chunk)]
    )
    task.add(llvm.ReturnOp())
    task.finish()

    # The launch, where the loop was.
    module.declare(PARALLEL_LAUNCH, [PTR, PTR], None)
    context = b.hoist(llvm.AllocaOp(b.index(1), context_type, alignment=8))
    for field, value in enumerate(passed_values):
        pointer = b.add(llvm.GEPOp(context, [0, field], context_type))
        b.add(llvm.StoreOp(value, pointer))  # type: ignore[arg-type]
    task_pointer = b.add(llvm.AddressOfOp(name, PTR))
    b.call(PARALLEL_LAUNCH, [task_pointer, context])
