"""`loop-outline-parallel`: a parallel loop becomes a function plus a runtime launch.

The outermost parallel `loop.for` of a function `@f` becomes

- a function `@f_parallelN(captures..., %begin: index, %end: index)` that runs
  the loop's body for `%i` in `[begin, end)` (an `scf.for`: its bounds are
  dynamic), where the captures are the values the body uses but does not define;
- `loop.launch @f_parallelN(captures...) lb to ub`, where the loop was: the runtime
  (`backends/llvm/runtime.py`) splits `[lb, ub)` into contiguous, balanced chunks,
  hands them out to its threads dynamically and returns when all have run.

```mlir
func.func @f(%A: memref<64xf32>) {
  %c2 = arith.constant 2.0 : f32
  loop.for %i = 0 to 64 parallel {
    %a = memref.load %A[%i] : memref<64xf32>
    %b = arith.mulf %a, %c2 : f32
    memref.store %b, %A[%i] : memref<64xf32>
  }
  func.return
}
```
becomes
```mlir
func.func @f(%A: memref<64xf32>) {
  loop.launch @f_parallel0(%A) 0 to 64 : memref<64xf32>
  func.return
}
func.func private @f_parallel0(%A: memref<64xf32>, %begin: index, %end: index) {
  %c2 = arith.constant 2.0 : f32
  %c1 = arith.constant 1 : index
  scf.for %i = %begin to %end step %c1 {
    ...
  }
  func.return
}
```

The body is a function of its own so that the buffers it touches arrive as
arguments again (`convert-loop-to-llvm` marks them `noalias`: distinct loop-level
buffers never overlap), rather than as pointers loaded from the runtime's context
struct that LLVM knows nothing about. Captured constants are not passed but
copied into the body, so vectorization and unrolling inside still see them as
constants.

Parallel loops nested in the outlined one, or in a vectorized loop, run serially
(one level of parallelism fills the cores): the pass makes them `serial`, so
after it no parallel loop is left.

Each launch says how many threads its work pays for, `{tc.max_threads = n}`:
from the loop's estimated work and the cost of a thread to a launch
(`analysis/parallel_work.py`; the option `thread-cost`, in work units, 0 for no
cap), and never more threads than iterations, unless the loop carries a
`tc.max_threads` of its own (a decision made before: by hand, by a schedule),
which the launch keeps. The runtime lets at most that many threads take part;
a launch of one is a call of the body on the caller. The launch of `@f` above,
whose loop does 64 x 3 work units (a load, a multiply, a store), is
`loop.launch @f_parallel0(%A) 0 to 64 {tc.max_threads = 4 : i64}` with
`thread-cost=10` (the largest n with n (n - 1) 10 <= 192).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.analysis.parallel_work import (
    ITERATION_COST_ATTR,
    MAX_THREADS_ATTR,
    THREAD_COST,
    iteration_work,
    loop_work,
    max_threads,
)
from tilecraft.dialects.loop import ForOp, LaunchOp, LoopKind, LoopKindAttr, YieldOp
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

PASS = "loop-outline-parallel"


def free_values(op: Operation) -> list[SSAValue]:
    """The values used inside `op` (in a loop: in its body) but defined outside
    it, in order of first use."""
    inside: set[SSAValue] = set()
    for inner in op.walk():
        inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.args)
    used: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op and isinstance(op, ForOp):
            continue  # (a loop's own bound stays where the loop was: its launch's bound)
        for operand in inner.operands:
            if operand not in inside:
                used[operand] = None
    return list(used)


def _enclosing_kinds(op: Operation) -> set[LoopKind]:
    kinds: set[LoopKind] = set()
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp):
            kinds.add(parent.kind.data)
        parent = parent.parent_op()
    return kinds


def _fresh_name(module: ModuleOp, base: str, taken: set[str]) -> str:
    if not taken:
        taken.update(op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp))
    n = 0
    while f"{base}_parallel{n}" in taken:
        n += 1
    name = f"{base}_parallel{n}"
    taken.add(name)
    return name


def _passable(t: Attribute) -> bool:
    """Whether a value of type `t` can be an argument of an outlined body."""
    return isinstance(t, MemRefType | IndexType | IntegerType | AnyFloat)


def check_outlinable(module: ModuleOp) -> None:
    """Raise an `OpError` at an outermost parallel loop that cannot be outlined
    (checked before rewriting, so no pattern fails half way)."""
    for op in module.walk():
        if not isinstance(op, ForOp) or op.kind.data != LoopKind.PARALLEL or not op.is_static:
            continue
        if _enclosing_kinds(op) & {LoopKind.PARALLEL, LoopKind.VECTORIZED}:
            continue
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, func.FuncOp):
            parent = parent.parent_op()
        if parent is None:
            raise OpError(
                op, f"{PASS}: a parallel loop outside a function cannot be outlined."
            )
        cap = op.attributes.get(MAX_THREADS_ATTR)
        if cap is not None and (not isinstance(cap, IntegerAttr) or cap.value.data < 1):
            raise OpError(
                op, f"{PASS}: {MAX_THREADS_ATTR} must be a positive integer (the most "
                f"threads the loop may run on), not {cap}.",
            )
        for value in free_values(op):
            if not _passable(value.type) and not isinstance(value.owner, arith.ConstantOp):
                raise OpError(
                    op,
                    f"{PASS}: the loop uses a value of type {value.type} defined outside "
                    "it; only memrefs, integers, indices and floats "
                    "can be passed to its outlined body.",
                )


def _given_cap(loop: ForOp) -> int | None:
    given = loop.attributes.get(MAX_THREADS_ATTR)
    return given.value.data if isinstance(given, IntegerAttr) else None


def _thread_cap(loop: ForOp, thread_cost: int) -> int | None:
    """The loop's own cap if it has one, else what its work pays for, at most one
    thread an iteration (None: no cap)."""
    given = loop.attributes.get(MAX_THREADS_ATTR)
    if isinstance(given, IntegerAttr):
        return given.value.data
    # More threads than iterations would find nothing to do.
    return min(max_threads(loop_work(loop), thread_cost), loop.extent) if thread_cost else None


@dataclass
class OutlineParallelLoop(RewritePattern):
    """The outermost parallel `loop.for` → `func.func @..._parallelN` + `loop.launch`."""

    module: ModuleOp
    taken: set[str]
    # The last function outlined from each function: the next goes after it.
    last: dict[func.FuncOp, func.FuncOp]
    # Work units a thread beyond the caller costs a launch (0: no cap).
    thread_cost: int = THREAD_COST

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != LoopKind.PARALLEL:
            return
        if _enclosing_kinds(op) & {LoopKind.PARALLEL, LoopKind.VECTORIZED}:
            return  # made serial by SerializeNestedParallelLoop
        function = op.parent_op()
        while not isinstance(function, func.FuncOp):
            assert function is not None, "checked by check_outlinable"
            function = function.parent_op()
        upper = op.upper
        threads = _thread_cap(op, self.thread_cost) if upper is None else _given_cap(op)
        # An extent known only when it runs: the launch caps its threads then.
        cost = iteration_work(op) / self.thread_cost if self.thread_cost else None
        captured = free_values(op)
        constants = [v for v in captured if isinstance(v.owner, arith.ConstantOp)]
        passed = [v for v in captured if v not in constants]

        # The body function: captures, then the chunk [begin, end).
        arg_types = [*(v.type for v in passed), IndexType(), IndexType()]
        entry = Block(arg_types=arg_types)
        for value, arg in zip(passed, entry.args):
            arg.name_hint = value.name_hint
        begin, end = entry.args[-2], entry.args[-1]
        begin.name_hint, end.name_hint = "begin", "end"
        mapping: dict[SSAValue, SSAValue] = dict(zip(passed, entry.args))
        for value in constants:
            copy = value.owner.clone()  # type: ignore[union-attr]
            entry.add_op(copy)
            mapping[value] = copy.results[0]
        one = arith.ConstantOp(IntegerAttr(1, IndexType()))
        one.result.name_hint = "c1"
        entry.add_op(one)
        # The body moves (not copied) into the function, its uses of the
        # captured values redirected to the function's arguments and copies.
        for value, replacement in mapping.items():
            value.replace_uses_with_if(replacement, lambda use: op.is_ancestor(use.operation))
        body = rewriter.move_region_contents_to_new_regions(op.body)
        body_block = body.block
        terminator = body_block.last_op
        assert isinstance(terminator, YieldOp)
        rewriter.erase(terminator)
        body_block.add_op(scf.YieldOp())
        entry.add_op(scf.ForOp(begin, end, one.result, [], body))
        entry.add_op(func.ReturnOp())
        name = _fresh_name(self.module, function.sym_name.data, self.taken)
        outlined = func.FuncOp(
            name,
            (arg_types, []),
            Region(entry),
            visibility=StringAttr("private"),
        )
        rewriter.insert(outlined, InsertPoint.after(self.last.get(function, function)))
        self.last[function] = outlined
        launch = LaunchOp(name, passed, op.lb.data, op.ub.data if upper is None else upper)
        if threads is not None:
            launch.attributes[MAX_THREADS_ATTR] = IntegerAttr(threads, 64)
        elif upper is not None and cost is not None:
            launch.attributes[ITERATION_COST_ATTR] = FloatAttr(cost, f64)
        rewriter.replace(op, launch)


class SerializeNestedParallelLoop(RewritePattern):
    """A parallel loop inside a parallel or vectorized one runs serially."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != LoopKind.PARALLEL:
            return
        if _enclosing_kinds(op) & {LoopKind.PARALLEL, LoopKind.VECTORIZED}:
            op.kind = LoopKindAttr(LoopKind.SERIAL)
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class LoopOutlineParallelPass(ModulePass):
    """Outline each outermost parallel loop into a function run by `loop.launch`."""

    name = "loop-outline-parallel"

    thread_cost: int = THREAD_COST
    """Work units a thread beyond the caller costs a launch (the cap's threshold,
    `analysis/parallel_work.py`); 0 writes no cap: every launch on all threads."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.thread_cost < 0:
            raise PassFailedException(
                f"{PASS}: thread-cost must be 0 (no cap) or a positive number of work "
                f"units, not {self.thread_cost}."
            )
        check_outlinable(op)
        # Nested parallel loops become serial first: the outlined bodies hold
        # serial loops only.
        PatternRewriteWalker(
            SerializeNestedParallelLoop(), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([OutlineParallelLoop(op, set(), {}, self.thread_cost)]),
            apply_recursively=False,
        ).rewrite_module(op)
