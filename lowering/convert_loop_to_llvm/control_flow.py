"""`convert-loop-to-llvm` patterns for control flow: serial `loop.for`,
`scf.for` (an outlined chunk), `loop.guard`, `scf.if` become blocks and
branches; `loop.launch` becomes a task and a call of the parallel runtime."""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.backends.llvm.builder import NSW, PTR, FunctionBuilder, scalar_type
from tilecraft.analysis.parallel_work import ITERATION_COST_ATTR, MAX_CAP, MAX_THREADS_ATTR
from tilecraft.dialects import llvmx
from tilecraft.dialects.llvmx import NO_RUNTIME_UNROLL, UNROLL_FULL
from tilecraft.backends.llvm.names import NO_THREAD_CAP, PARALLEL_LAUNCH
from tilecraft.dialects.loop import AssertOp, ForOp, GuardOp, LaunchOp, LoopKind
from tilecraft.utils.attrs import integer_attr
from tilecraft.lowering.convert_loop_to_llvm.state import (
    RUNTIME_ERROR,
    Conversion,
    expanded,
    replace_with,
)
from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, UnitAttr, f64, i32, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

SLT = integer_attr(llvm.ICmpPredicateFlag("slt").to_int(), i64)


# Control flow -----------------------------------------------------------------


def _split(op: Operation) -> tuple[Block, Block]:
    """Split `op`'s block before `op`: (the block before, the block from `op` on)."""
    before = op.parent_block()
    assert before is not None
    return before, before.split_before(op)


def _insert_block_before(block: Block, after: Block) -> None:
    region = after.parent
    assert region is not None
    region.insert_block_before(block, after)


def _loop_body(
    rewriter: PatternRewriter,
    b: FunctionBuilder,
    op: Operation,
    body: Block,
    lb: SSAValue,
    ub: SSAValue,
    maybe_empty: bool,
) -> None:
    """Turn `op` (a loop whose single body block has the induction variable as
    its argument) into a bottom-tested counted loop `[lb, ub)` with step 1."""
    before, after = _split(op)
    body.parent.detach_block(body)  # type: ignore[union-attr]
    _insert_block_before(body, after)
    iv = rewriter.replace_value_with_new_type(body.args[0], i64)
    yield_op = body.last_op
    assert yield_op is not None
    following = llvm.AddOp(iv, b.index(1), overflow=NSW)
    more = llvm.ICmpOp(following.res, ub, SLT)
    latch = llvm.CondBrOp(more.res, body, [following.res], after, [])
    if isinstance(op, ForOp) and op.kind.data == LoopKind.UNROLLED:
        latch.attributes[UNROLL_FULL] = UnitAttr()
    elif isinstance(op, ForOp) and op.upper is not None:
        latch.attributes[NO_RUNTIME_UNROLL] = UnitAttr()
    for new in (following, more, latch):
        body.insert_op_before(new, yield_op)
    rewriter.erase(yield_op)
    if maybe_empty:
        enter = llvm.ICmpOp(lb, ub, SLT)
        before.add_op(enter)
        before.add_op(llvm.CondBrOp(enter.res, body, [lb], after, []))
    else:
        before.add_op(llvm.BrOp(body, lb))
    rewriter.erase(op)


@dataclass
class ForLowering(RewritePattern):
    """A serial `loop.for` → a counted loop; an unrolled one → a counted loop that
    LLVM unrolls fully (`llvmx.unroll_full` on its back edge)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        if op.upper is not None:  # a bound known when the program runs: it may be empty
            _loop_body(rewriter, b, op, op.body.block, b.index(op.lb.data), op.upper, maybe_empty=True)
            return
        if op.extent == 0:
            rewriter.erase(op)
            return
        lb, ub = b.index(op.lb.data), b.index(op.ub.data)
        _loop_body(rewriter, b, op, op.body.block, lb, ub, maybe_empty=False)


@dataclass
class ScfForLowering(RewritePattern):
    """`scf.for %i = %begin to %end step %c1` (an outlined chunk) → a counted
    loop with an entry test (a chunk may be empty)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        _loop_body(rewriter, b, op, op.body.block, op.lb, op.ub, maybe_empty=True)


@dataclass
class GuardLowering(RewritePattern):
    """`loop.guard %c { body }` → `cond_br %c, ^body, ^after` (or the body alone,
    or nothing, when `%c` is a constant)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GuardOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        body = op.body.block
        assert body.last_op is not None
        if op.cond in b.known:
            if b.known[op.cond]:
                rewriter.erase(body.last_op)
                rewriter.inline_block(body, InsertPoint.before(op))
            rewriter.erase(op)
            return
        before, after = _split(op)
        op.body.detach_block(body)
        _insert_block_before(body, after)
        rewriter.replace(body.last_op, llvm.BrOp(after))
        before.add_op(llvm.CondBrOp(op.cond, body, [], after, []))
        rewriter.erase(op)


@dataclass
class AssertLowering(RewritePattern):
    """`loop.assert %ok, "msg"` → `cond_br %ok, ^go_on, ^fail` where `^fail` stores
    the message's code in the module's error word and goes on: the caller reads
    the word after the call (`backends/llvm/jit.py`, `RuntimeErrors`)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AssertOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        code = self.state.error_code(op.message.data)
        if op.cond in b.known:
            if not b.known[op.cond]:
                b.add(llvm.StoreOp(b.const(code, i32), b.add(llvm.AddressOfOp(RUNTIME_ERROR, PTR))))
            rewriter.erase(op)
            return
        before, after = _split(op)
        fail = Block()
        _insert_block_before(fail, after)
        address = llvm.AddressOfOp(RUNTIME_ERROR, PTR)
        fail.add_ops([address, llvm.StoreOp(b.const(code, i32), address.result), llvm.BrOp(after)])
        before.add_op(llvm.CondBrOp(op.cond, after, [], fail, []))
        rewriter.erase(op)


@dataclass
class IfLowering(RewritePattern):
    """`scf.if` → `cond_br` to the two regions, which branch to a merge block
    whose arguments are the results."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IfOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        result_types = [scalar_type(r.type) for r in op.results]
        if op.cond in b.known:
            region = op.true_region if b.known[op.cond] else op.false_region
            if not region.blocks:
                rewriter.erase(op)
                return
            block = region.block
            yielded = block.last_op
            assert yielded is not None
            values = list(yielded.operands)
            rewriter.erase(yielded)
            rewriter.inline_block(block, InsertPoint.before(op))
            replace_with(rewriter, op, values)
            return
        before = op.parent_block()
        assert before is not None
        after = before.split_before(op, arg_types=result_types)
        targets = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                targets.append(after)
                continue
            block = region.block
            region.detach_block(block)
            _insert_block_before(block, after)
            yielded = block.last_op
            assert yielded is not None
            rewriter.replace(yielded, llvm.BrOp(after, *yielded.operands))
            targets.append(block)
        before.add_op(llvm.CondBrOp(op.cond, targets[0], [], targets[1], []))
        replace_with(rewriter, op, list(after.args))


# Parallel launches ------------------------------------------------------------


@dataclass
class LaunchLowering(RewritePattern):
    """`loop.launch @body(args) lb to ub` → a task `@body_task(%ctx, %chunk,
    %chunks)` and a call of the runtime with the task, a context struct and the
    most threads the launch may use (its `tc.max_threads`, else no cap). A launch
    capped at one thread is a call of the body on `[lb, ub)`: no task, no
    runtime, and a module with no other launch has no pool.

    The task only knows how to split: chunk `c` of `n` is `[lb + c * extent / n,
    lb + (c + 1) * extent / n)`, contiguous and balanced (chunks differ by at most
    one iteration), so the body's vector and unrolled code is the same whatever
    the split. How many chunks and which thread runs which is the runtime's
    decision; a chunk may be empty (the body's entry test covers it)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LaunchOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        body = op.body.root_reference.data
        args = [v for a in op.args for v in expanded(a)]
        lb = op.lb.value.data
        cap = op.attributes.get(MAX_THREADS_ATTR)
        cap = min(cap.value.data, NO_THREAD_CAP) if isinstance(cap, IntegerAttr) else NO_THREAD_CAP
        end = b.index(op.ub.value.data) if op.upper is None else op.upper
        if cap == 1:
            b.call(body, [*args, b.index(lb), end])
            rewriter.erase(op)
            return
        # A run-time extent travels in the context, after the arguments.
        dynamic_extent = None if op.upper is None else b.isub(op.upper, b.index(lb))
        passed = args if dynamic_extent is None else [*args, dynamic_extent]
        types: list[Attribute] = [a.type for a in passed]
        context_type = llvm.LLVMStructType.from_type_list(types)
        name = f"{body}_task"

        # The task: unpack the context, compute the chunk's range, call the body.
        task_function = self.state.define(name, [PTR, i32, i32], "internal")
        task = FunctionBuilder(task_function)
        context, chunk, chunks = task.args
        unpacked = []
        for index, field_type in enumerate(types):
            pointer = task.add(llvm.GEPOp(context, [0, index], context_type))
            unpacked.append(task.add(llvm.LoadOp(pointer, field_type)))
        chunk64 = task.add(llvm.ZExtOp(chunk, i64))
        chunks64 = task.add(llvm.ZExtOp(chunks, i64))
        if dynamic_extent is None:
            extent = task.index(op.ub.value.data - lb)
        else:
            extent = unpacked.pop()

        def chunk_start(c: SSAValue) -> SSAValue:
            start = task.add(llvm.UDivOp(task.imul(c, extent, nsw=True), chunks64))
            return task.iadd(start, task.index(lb), nsw=True)

        next_chunk = task.iadd(chunk64, task.index(1), nsw=True)
        task.call(body, [*unpacked, chunk_start(chunk64), chunk_start(next_chunk)])
        task.add(llvm.ReturnOp())
        task.finish()
        function = b.func
        rewriter.insert(task_function, InsertPoint.after(function))

        # The launch, where the loop was (none when the extent is not positive).
        if dynamic_extent is not None:
            positive = b.icmp("slt", b.index(0), dynamic_extent)
            before, after = _split(op)
            launch = Block()
            _insert_block_before(launch, after)
            before.add_op(llvm.CondBrOp(positive, launch, [], after, []))
            b.resume(launch)
        self.state.declare(PARALLEL_LAUNCH, [PTR, PTR, i32], None)
        context = b.hoist(llvm.AllocaOp(b.index(1), context_type, alignment=8))
        threads = b.const(cap, i32)
        cost = op.attributes.get(ITERATION_COST_ATTR)
        if dynamic_extent is not None and isinstance(cost, FloatAttr):
            threads = _threads_paid_for(b, dynamic_extent, cost.value.data, cap)
        for index, value in enumerate(passed):
            pointer = b.add(llvm.GEPOp(context, [0, index], context_type))
            b.add(llvm.StoreOp(value, pointer))
        task_pointer = b.add(llvm.AddressOfOp(name, PTR))
        b.call(PARALLEL_LAUNCH, [task_pointer, context, threads])
        if dynamic_extent is not None:
            b.add(llvm.BrOp(after))
            b.at(op)
        rewriter.erase(op)


def _threads_paid_for(b: FunctionBuilder, extent: SSAValue, cost: float, cap: int) -> SSAValue:
    """`analysis/parallel_work.max_threads` of `extent` iterations of `cost` (an
    iteration's work in thread costs) when the launch runs: the largest `n` with
    `n * (n - 1) <= extent * cost`, i.e. floor((1 + sqrt(1 + 4 * work)) / 2),
    at least 1 and at most the iterations and `cap`."""
    work = b.add(llvm.FMulOp(b.add(llvm.SIToFPOp(extent, f64)), b.const(4 * cost, f64)))
    root = b.add(llvm.FSqrtOp(b.add(llvm.FAddOp(work, b.const(1.0, f64)))))
    half = b.add(llvm.FMulOp(b.add(llvm.FAddOp(root, b.const(1.0, f64))), b.const(0.5, f64)))
    n = b.add(llvmx.FPToSIOp(half, i64))
    n = b.select(b.icmp("slt", extent, n), extent, n)
    n = b.select(b.icmp("slt", b.index(min(cap, MAX_CAP)), n), b.index(min(cap, MAX_CAP)), n)
    n = b.select(b.icmp("slt", n, b.index(1)), b.index(1), n)
    return b.add(llvm.TruncOp(n, i32))
