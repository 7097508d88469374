"""convert-te-to-loop: apply each te function's schedule and emit its loop program.

A te function (a `func.func` with `te.compute`s and a `sched.schedule`) becomes a
loop function taking memrefs: its inputs first, then one output memref per result,
returning nothing. The work is split as an MLIR conversion is:

1. analyses, per function, before anything changes: the schedule replay
   (`dialects.sched_replay`, which also reports a bad schedule at its op) and bound
   inference (`analysis.bounds`: the region of every stage computed at a loop, the
   extent of every axis);
2. the function-level decisions (`TeFunctionLowering.prepare`): the memref
   arguments, one `loop.alloc` per intermediate stage computed at the root (in its
   memory scope), the schedule op dropped (its decisions now live in the analyses);
3. one pattern application per te stage (`LowerTeCompute`, applied by a
   `PatternRewriteWalker`): the loop nest of the stage a `te.compute` defines is
   emitted in its place (`lowering.stage_emitter`), with the stages computed at its
   loops inside it and the cache copies the schedule derives from it, and the
   tensor is replaced by `bufferization.to_tensor` of its buffer, so the te.reads of
   the stages still to come stay well typed; a stage computed at a consumer's loop
   is emitted with that consumer;
4. the function-level finish: the tensor arguments and results go, the
   bridging `to_tensor`s with them, and what nothing reads any more (index
   arithmetic no load or store used, the te.computes of the stages emitted inside
   their consumers) goes with xDSL's dead-code pattern (`RemoveUnusedOperations`).

A function that calls a te function (a model's graph function) keeps calling it
on tensors, bridged as MLIR's function-boundary bufferization does (`BridgeKernelCall`):
operands through `bufferization.to_buffer`, a `memref.alloc` for each result passed
as an output argument, the result read back with `bufferization.to_tensor`.
`bufferize-graph-function` then gives that function its own memref form.

compute_inline is not carried out here: substituting a te.compute into its readers
is te-inline's job (`transforms/te_inline.py`, run before this pass), and a schedule
that still inlines a te.compute is rejected at its `sched.compute_inline`. A
compute_inline of a cache copy stage (a cache_read, or what a cache_write left
behind) substitutes no expression: the replay makes its readers read the copy's
source buffer, and that is applied here.

```mlir
%C = te.compute "C" (%i: "i") -> tensor<10xf32> {...}     // schedule: split %i by 4
```
becomes
```mlir
loop.for %i.outer = 0 to 3 {
  loop.for %i.inner = 0 to 4 {
    %i = (arith: i.outer * 4 + i.inner)
    %in = arith.cmpi slt, %i, %c10 : index
    loop.guard %in { ... memref.store %v, %C[%i] ... }
  }
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, bufferization, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import RemoveUnusedOperations

from tilecraft.analysis.bounds import Size, check_reads_in_bounds, extent_of, infer_bounds
from tilecraft.analysis.expr import Expr
from tilecraft.dialects.sched_replay import MAX_UNROLL, ScheduleState, Stage, find_schedule
from tilecraft.dialects import loop, te
from tilecraft.lowering.loop_builder import Cursor, emit_index
from tilecraft.dialects.graph.shapes import shape_of
from tilecraft.lowering.sizes import emit_size, read_names
from tilecraft.lowering.stage_emitter import Buffer, StageEmitter
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.names import name_hint
from tilecraft.utils.symbolic import SymExpr

PASS = "convert-te-to-loop"


class _RootCursor(Cursor):
    """The function's body, inserting through the rewriter before the te.compute
    being lowered (the stages' nests land in program order)."""

    def __init__(self, block: Block):
        super().__init__(block)
        self.rewriter: PatternRewriter | None = None
        self.anchor: Operation | None = None

    def insert(self, op: Operation) -> Operation:
        assert self.rewriter is not None and self.anchor is not None
        self.rewriter.insert(op, InsertPoint.before(self.anchor))
        return op


def _own_op(s: Stage) -> te.ComputeOp | None:
    """The te.compute a stage comes from (a cache copy made by cache_read: none)."""
    if s.compute is not None:
        return s.compute
    if s.tensor is not None and isinstance(s.tensor.owner, te.ComputeOp):
        return s.tensor.owner
    return None


class TeFunctionLowering:
    """One te function on its way to the loop level: the analyses of its schedule,
    the buffers of its stages and the function-level rewrites."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        for n, t in enumerate(f.function_type.inputs.data):
            if not isinstance(t, TensorType):
                raise OpError(
                    f,
                    f"{PASS}: argument #{n + 1} of @{f.sym_name.data} has type {t}; te functions take "
                    "tensors only (pass a scalar as a one-element tensor)",
                )
        for compute in te.compute_ops(f):
            check_reads_in_bounds(compute, PASS)
        self.state = ScheduleState.replay(find_schedule(f), f)
        if self.state.inlined_computes:
            op = self.state.inlined_computes[0]
            stage = next(s for s in self.state.stages if s.attach_op is op)
            raise OpError(
                op,
                f"{PASS}: stage '{stage.name}' is still marked sched.compute_inline; "
                "run te-inline first, which substitutes it into its readers.",
            )
        self.bounds = infer_bounds(self.state)
        self._check_unroll()
        self.inputs = [s for s in self.state.stages if s.kind == "input"]
        self.outputs = self._outputs()
        self.arg_stages = self.inputs + self.outputs
        self.arg_types: list[Attribute] = [_memref_type(s) for s in self.arg_stages]
        self._check_sizes()
        self.buffers: dict[Stage, Buffer] = {}
        self.emitter = StageEmitter(self.state, self.bounds, self.buffers)
        self.anchored = self._anchors()
        self.root: _RootCursor | None = None
        self.bridges: list[Operation] = []
        self.sizes: dict[Size, SSAValue] = {}  # read from the arguments in `prepare`

    def _check_sizes(self) -> None:
        """Every size known only when the function runs is a whole dimension of
        one of its arguments, from which the loop function reads it."""
        self.size_sources: dict[str, tuple[int, int]] = {}
        for n, s in enumerate(self.arg_stages):
            for d, size in enumerate(s.shape):
                if isinstance(size, SymExpr) and size.free_names() == {str(size)}:
                    self.size_sources.setdefault(str(size), (n, d))
        for s in self.state.stages:
            sizes = [d for d in s.shape if not isinstance(d, int)]
            if s.compute is not None and s.compute.reduce is not None:
                sizes += [hi for _, hi in s.compute.reduce.bounds if not isinstance(hi, int)]
            for size in sizes:
                missing = size.free_names() - set(self.size_sources)
                if missing:
                    raise OpError(
                        s.compute or self.f,
                        f"{PASS}: the size {', '.join(sorted(missing))} of '{s.name}' is not a whole "
                        "dimension of any argument or result, so the loop function cannot read it",
                    )
        for op in self.f.walk():
            if isinstance(op, te.SizeOp) and op.size_name.data not in self.size_sources:
                raise OpError(
                    op,
                    f"{PASS}: the size {op.size_name.data} is not a whole dimension of any argument "
                    "or result, so the loop function cannot read it",
                )

    def _check_unroll(self) -> None:
        for s, ext in self.bounds.leaf_extents.items():
            for v in s.leaves:
                if not isinstance(ext[v], int) and v.annotation not in ("serial", "parallel"):
                    raise OpError(
                        v.annotation_op or s.compute or self.f,
                        f"{PASS}: axis '{v.name}' of '{s.name}' runs to {ext[v]}, known only when "
                        f"the program runs; a {v.annotation} loop needs a static extent: split the "
                        "axis by a factor and annotate the inner part",
                    )
                if v.annotation == "unrolled" and isinstance(ext[v], int) and ext[v] > MAX_UNROLL:
                    raise OpError(
                        v.annotation_op,
                        f"{PASS}: axis '{v.name}' has extent {ext[v]}; unrolling more "
                        f"than {MAX_UNROLL} iterations is refused — split it first.",
                    )

    def _outputs(self) -> list[Stage]:
        ret = self.f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        outputs: list[Stage] = []
        for v in ret.arguments:
            stage = self.state.stage_of.get(v)
            if stage is None or stage.kind == "input" or stage in outputs:
                raise OpError(
                    ret,
                    f"{PASS}: each result must be a distinct te.compute "
                    "(return a copy to return an input).",
                )
            outputs.append(stage)
        return outputs

    def _anchors(self) -> dict[te.ComputeOp, list[Stage]]:
        """Which root stages are emitted where: at the te.compute they come from; a
        cache copy with no te.compute of its own, just before the next stage that
        has one (its first reader), in dependence order."""
        anchored: dict[te.ComputeOp, list[Stage]] = {}
        pending: list[Stage] = []
        for s in self.emitter.order:
            if s.kind == "input" or s.attach == "inline":
                continue
            if s.attach == "root":
                pending.append(s)
            op = _own_op(s)
            if op is not None:
                anchored.setdefault(op, []).extend(pending)
                pending = []
        assert not pending, "a cache copy is read by a later stage"
        return anchored

    # -- function-level rewrites ------------------------------------------------

    def prepare(self) -> None:
        """Memref arguments after the tensor ones (which go in `finish`), a buffer
        per root stage, and the schedule op dropped (the analyses hold it)."""
        block = self.f.body.block
        schedule = find_schedule(self.f)
        if schedule is not None:
            schedule.detach()
            schedule.erase()
        args = []
        for s, t in zip(self.arg_stages, self.arg_types):
            arg = block.insert_arg(t, len(block.args))
            arg.name_hint = name_hint(s.name)
            self.buffers[s] = Buffer(arg, [Expr()] * len(s.shape))
            args.append(arg)
        first = block.first_op
        assert first is not None
        # The sizes known when it runs, read from the arguments that carry them.
        for name, (n, d) in self.size_sources.items():
            index = arith.ConstantOp(IntegerAttr(d, IndexType()))
            dim = memref.DimOp(args[n], index)
            dim.result.name_hint = name_hint(name)
            block.insert_ops_before([index, dim], first)
            self.sizes[Size(name)] = dim.result
        for s in self.emitter.order:
            if s.kind != "input" and s.attach == "root" and s not in self.outputs:
                sizes = [self._size(d, block, first) for d in s.shape if not isinstance(d, int)]
                alloc = loop.AllocOp(s.name, s.scope, _memref_type(s), sizes)
                alloc.buffer.name_hint = name_hint(s.name)
                block.insert_op_before(alloc, first)
                self.buffers[s] = Buffer(alloc.buffer, [Expr()] * len(s.shape))
        self.root = _RootCursor(block)

    def _size(self, d: SymExpr, block: Block, before: Operation) -> SSAValue:
        """A size of an intermediate buffer, computed at the function's entry."""
        cursor = _EntryCursor(block, before)
        return emit_index(Expr.lift(extent_of(d, self.f)), self.sizes, cursor)

    def lower(self, op: te.ComputeOp, rewriter: PatternRewriter) -> None:
        """Emit the root stages anchored at `op` before it; replace its tensor by
        its buffer if that tensor is computed at the root."""
        stages = self.anchored.pop(op, [])
        assert self.root is not None
        self.root.rewriter, self.root.anchor = rewriter, op
        for s in stages:
            self.emitter.emit(s, self.root, dict(self.sizes))
        stage = self.state.stage_of[op.result]
        if stage.attach == "root":
            cast = bufferization.ToTensorOp(self.buffers[stage].value)
            self.bridges.append(cast)
            rewriter.replace(op, cast)

    def finish(self) -> None:
        """The loop function's signature: memrefs in, nothing out."""
        f = self.f
        block = f.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        ret.detach()
        ret.erase()
        block.add_op(func.ReturnOp())
        # What nothing reads: index arithmetic no load or store used, the
        # te.computes of stages emitted inside their consumers' loops.
        # (xDSL's RemoveUnusedOperations pattern, walked consumers first; its
        # region_dce keeps a te.compute whose body yields a value alive.)
        PatternRewriteWalker(RemoveUnusedOperations(), walk_reverse=True).rewrite_region(f.body)
        for cast in self.bridges:
            cast.detach()
            cast.erase()
        for arg in list(block.args[: len(block.args) - len(self.arg_stages)]):
            block.erase_arg(arg)
        f.function_type = FunctionType.from_lists(self.arg_types, [])
        f.arg_attrs = ArrayAttr([DictionaryAttr(_arg_attrs(s)) for s in self.arg_stages])
        f.res_attrs = None


def _memref_type(s: Stage) -> MemRefType:
    """A stage's buffer type: a `?` for each size known when the program runs."""
    dims = [d if isinstance(d, int) else DYNAMIC_INDEX for d in s.shape]
    return MemRefType(s.element_type, dims)


def _arg_attrs(s: Stage) -> dict[str, Attribute]:
    attrs: dict[str, Attribute] = {"tc.name": StringAttr(s.name)}
    names = [str(d) for d in s.shape if not isinstance(d, int)]
    if names:
        attrs["tc.dims"] = ArrayAttr([StringAttr(n) for n in names])
    return attrs


class _EntryCursor(Cursor):
    """The function's entry, before its first op (sizes computed once)."""

    def __init__(self, block: Block, before: Operation):
        super().__init__(block)
        self.anchor = before

    def insert(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op


# -- patterns --------------------------------------------------------------------


@dataclass
class LowerTeCompute(RewritePattern):
    """One te stage: its loop nest in place of its `te.compute`.

    ```mlir
    %B = te.compute "B" (%i: "i") -> tensor<8xf32> { ... te.read %A[%i] ... }
    ```
    becomes (with `%B.buf` the buffer `prepare` chose)
    ```mlir
    loop.for %i = 0 to 8 { ... memref.load %A[%i] ... memref.store %v, %B.buf[%i] }
    %B = bufferization.to_tensor %B.buf : memref<8xf32> to tensor<8xf32>
    ```
    """

    lowerings: dict[func.FuncOp, TeFunctionLowering]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: te.ComputeOp, rewriter: PatternRewriter) -> None:
        lowering = self.lowerings.get(op.parent_op())
        if lowering is None or op not in lowering.anchored:
            return
        lowering.lower(op, rewriter)


@dataclass
class BridgeKernelCall(RewritePattern):
    """A call of a te function, on tensors, calls its loop form instead.

    ```mlir
    %y = func.call @k(%x) : (tensor<4xf32>) -> tensor<4xf32>
    ```
    becomes
    ```mlir
    %x.buf = bufferization.to_buffer %x : tensor<4xf32> to memref<4xf32>
    %y.buf = memref.alloc() : memref<4xf32>
    func.call @k(%x.buf, %y.buf) : (memref<4xf32>, memref<4xf32>) -> ()
    %y = bufferization.to_tensor %y.buf : memref<4xf32> to tensor<4xf32>
    ```
    """

    kernels: dict[str, TeFunctionLowering]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        name = op.callee.root_reference.data
        lowering = self.kernels.get(name)
        if lowering is None or not any(isinstance(t, TensorType) for t in op.result_types):
            return
        want = lowering.arg_types
        n_in = len(op.arguments)
        new_ops: list[Operation] = []
        args = []
        for v, t in zip(op.arguments, want[:n_in]):
            to_buffer = bufferization.ToBufferOp(operands=[v], result_types=[t])
            to_buffer.memref.name_hint = v.name_hint
            new_ops.append(to_buffer)
            args.append(to_buffer.memref)
        results = []
        sizes = _result_sizes(op, args, new_ops)
        for r, t in zip(op.results, want[n_in:]):
            dynamic = [sizes[d] for d in shape_of(r.type) if not isinstance(d, int)]
            alloc = memref.AllocOp(dynamic, [], t)  # type: ignore[arg-type]
            alloc.memref.name_hint = r.name_hint
            new_ops.append(alloc)
            args.append(alloc.memref)
            # (the result's own type: a `?` keeps its name)
            results.append(bufferization.ToTensorOp.create(operands=[alloc.memref], result_types=[r.type]))
            results[-1].tensor.name_hint = r.name_hint
        call = func.CallOp(name, args, [])
        call.attributes.update(op.attributes)
        for new in (*new_ops, call, *results):
            new.location = op.location  # diagnostics of later passes point at the call
        rewriter.replace(op, [*new_ops, call, *results], [r.tensor for r in results])


def _result_sizes(op: func.CallOp, buffers: list[SSAValue], new_ops: list[Operation]) -> dict:
    """The `?` sizes of a kernel call's results, computed from its operands'."""
    wanted = [d for r in op.results for d in shape_of(r.type) if not isinstance(d, int)]
    if not wanted:
        return {}
    names = set().union(*(d.free_names() for d in wanted))
    values = read_names([(b, shape_of(a.type)) for b, a in zip(buffers, op.arguments)], names, new_ops.append)
    missing = names - set(values)
    if missing:
        raise OpError(op, f"{PASS}: the call's results have sizes ({', '.join(sorted(missing))}) that "
                      "none of its operands has as a whole dimension")  # fmt: skip
    return {d: emit_size(d, values, new_ops.append) for d in wanted}


def check_kernel_calls(module: ModuleOp, kernels: dict[str, TeFunctionLowering]) -> None:
    """Each call of a te function passes one tensor per memref argument of its
    loop form (a te function's non-tensor arguments have none), before any rewrite."""
    for op in module.walk():
        if not isinstance(op, func.CallOp) or op.callee.root_reference.data not in kernels:
            continue
        name = op.callee.root_reference.data
        got = [a.type for a in op.arguments] + list(op.result_types)
        want = kernels[name].arg_types
        if len(got) != len(want) or any(
            not isinstance(g, TensorType)
            or (g.element_type, g.get_shape()) != (w.element_type, w.get_shape())
            for g, w in zip(got, want)
        ):
            raise OpError(
                op,
                f"{PASS}: the call of @{name} passes ({', '.join(map(str, got))}), "
                f"but the kernel takes ({', '.join(map(str, want))})",
            )


def te_to_loop_patterns(lowerings: dict[func.FuncOp, TeFunctionLowering]) -> list[RewritePattern]:
    kernels = {f.sym_name.data: lowering for f, lowering in lowerings.items()}
    return [LowerTeCompute(lowerings), BridgeKernelCall(kernels)]


def te_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp) and any(isinstance(o, te.ComputeOp) for o in f.walk())
    ]


@dataclass(frozen=True)
class ConvertTeToLoopPass(ModulePass):
    """Lower every te function (with its schedule) to the loop dialect; calls of
    them are bridged for bufferize-graph-function."""

    name = "convert-te-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = te_functions(op)
        if not kernels:
            return
        # Every analysis (and every diagnostic it raises) before the IR changes.
        lowerings = {f: TeFunctionLowering(f) for f in kernels}
        check_kernel_calls(op, {f.sym_name.data: lowering for f, lowering in lowerings.items()})
        for lowering in lowerings.values():
            lowering.prepare()
        # No dead-code elimination during the walk: a te.compute whose result only
        # func.return reads would go before its stage is emitted.
        patterns = GreedyRewritePatternApplier(te_to_loop_patterns(lowerings), dce_enabled=False)
        PatternRewriteWalker(patterns).rewrite_module(op)
        for lowering in lowerings.values():
            assert not lowering.anchored, "every root stage is lowered"
            lowering.finish()
