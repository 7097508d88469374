"""Replaying a `sched.schedule`: stages, their axes and how each loop is formed.

The schedule ops are interpreted in order, as TVM's Python calls are, building one
`Stage` per tensor (input, te.compute, cache copy). A stage keeps its root axes
(one per output dimension, then one per reduce axis), the relations that derive
new axes from old ones (`Split`, `Fuse`), the current order of its leaf axes,
annotations (parallel, vectorized, unrolled) and where it is computed (at the
root of the function, inlined, or at a leaf axis of a consumer).

It lives with the sched dialect because it is the dialect's verifier (and the
meaning of its ops): every primitive checks its operands against
the state (an axis that is not a leaf any more, a reduce axis being vectorized,
a compute_at into a stage that does not read the producer, ...) and raises an
`OpError` at the op at fault. `convert-te-to-loop` lowers from the same state.

Extents are not fixed here: a stage computed at a consumer's loop covers only the
region that loop reads, known once bounds are inferred (`analysis.bounds`),
so relations keep their factors and extents are derived from the root extents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from tilecraft.dialects import sched, te
from tilecraft.dialects.graph.shapes import shape_of
from tilecraft.utils.diagnostics import OpError

MAX_UNROLL = 512


@dataclass(eq=False)
class IterVar:
    name: str
    kind: str  # "spatial" or "reduce"
    stage: Stage
    annotation: str = "serial"
    annotation_op: Operation | None = None
    valid: bool = True

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class Split:
    parent: IterVar
    outer: IterVar
    inner: IterVar
    factor: int | None
    nparts: int | None


@dataclass(eq=False)
class Fuse:
    parents: list[IterVar]
    fused: IterVar


@dataclass(eq=False)
class Stage:
    """One tensor's computation. `kind` is "input", "compute" (a te.compute body,
    also the stage a cache_write creates) or "copy" (reads `source` element by element:
    a cache_read, or the original stage after a cache_write)."""

    name: str
    kind: str
    shape: tuple  # ints, and a SymExpr for each size known when the program runs
    element_type: Attribute
    root: list[IterVar] = field(default_factory=list)
    compute: te.ComputeOp | None = None
    source: Stage | None = None
    reads: dict[SSAValue, Stage] = field(default_factory=dict)
    relations: list[Split | Fuse] = field(default_factory=list)
    leaves: list[IterVar] = field(default_factory=list)
    attach: str = "root"  # "root", "inline" or "at"
    attach_stage: Stage | None = None
    attach_axis: IterVar | None = None
    attach_op: Operation | None = None
    scope: str = "global"
    scope_explicit: bool = False  # set by cache_read/cache_write; else the lowering picks
    tensor: SSAValue | None = None
    is_output: bool = False
    tensorize_axis: IterVar | None = None  # the loops from here inwards are an intrinsic
    tensorize_op: Operation | None = None

    def __repr__(self) -> str:
        return f"Stage({self.name})"

    @property
    def loop_order(self) -> list[IterVar]:
        """The leaves in the order loops are emitted: the vectorized axis, if any, is
        sunk to the innermost position (legal: spatial loops of one stage can be
        interchanged), which is what vectorizing it with loops inside means."""
        vec = [v for v in self.leaves if v.annotation == "vectorized"]
        return [v for v in self.leaves if v.annotation != "vectorized"] + vec

    @property
    def reduce_root(self) -> list[IterVar]:
        return [v for v in self.root if v.kind == "reduce"]

    @property
    def spatial_root(self) -> list[IterVar]:
        return [v for v in self.root if v.kind == "spatial"]

    def inputs(self) -> list[Stage]:
        """The stages this stage reads, each once, in a stable order; reads of an
        inlined stage count as reads of what it reads (it has no buffer)."""
        seen: list[Stage] = []
        candidates = list(self.reads.values()) + ([self.source] if self.source else [])
        for s in candidates:
            for t in s.inputs() if s.attach == "inline" else [s]:
                if t not in seen:
                    seen.append(t)
        return seen

    def root_bounds(self) -> list[tuple[int, int]]:
        """[lo, hi) of each root axis over the whole tensor (reduce axes: their range)."""
        out = [(0, n) for n in self.shape]
        if self.kind == "compute" and self.compute is not None and self.compute.reduce:
            out += self.compute.reduce.bounds
        return out

    def _make_root(self, names: list[str], reduce_names: list[str] = ()):
        self.root = [IterVar(n, "spatial", self) for n in names] + [
            IterVar(n, "reduce", self) for n in reduce_names
        ]
        self.leaves = list(self.root)
        self.relations = []


class ScheduleState:
    """The stages of one te function after its schedule has been applied."""

    def __init__(self, func_op: func.FuncOp):
        self.func_op = func_op
        self.stages: list[Stage] = []
        self.stage_of: dict[SSAValue, Stage] = {}
        self._handles: dict[SSAValue, Stage | IterVar] = {}
        self.inlined_computes: list[Operation] = []  # compute_inline ops of te.computes
        names = _arg_names(func_op)
        for arg, name in zip(func_op.body.block.args, names):
            if not hasattr(arg.type, "get_shape"):
                continue
            shape = shape_of(arg.type) if isinstance(arg.type, TensorType) else tuple(arg.type.get_shape())
            stage = Stage(name, "input", shape, arg.type.get_element_type())
            stage.tensor = arg
            self._add(stage)
        for c in te.compute_ops(func_op):
            stage = Stage(
                c.tensor_name.data, "compute", c.shape, c.result.type.get_element_type()
            )
            stage.compute = c
            stage.tensor = c.result
            reduce_names = c.reduce.names if c.reduce else []
            stage._make_root(c.names, reduce_names)
            for read in c.body.walk():
                if isinstance(read, te.ReadOp):
                    producer = self.stage_of.get(read.tensor)
                    if producer is None:
                        raise OpError(read, "te.read of a tensor that is neither an argument nor a te.compute result.")
                    stage.reads[read.tensor] = producer
            self._add(stage)
        ret = func_op.body.block.last_op
        if isinstance(ret, func.ReturnOp):
            for v in ret.arguments:
                if v in self.stage_of:
                    self.stage_of[v].is_output = True

    def _add(self, stage: Stage):
        self.stages.append(stage)
        if stage.tensor is not None:
            self.stage_of[stage.tensor] = stage

    # -- replay -------------------------------------------------------------

    @staticmethod
    def replay(schedule: sched.ScheduleOp | None, func_op: func.FuncOp | None = None) -> ScheduleState:
        """The state after every op of `schedule`; raises OpError at the first bad op."""
        if func_op is None:
            func_op = schedule.parent_op()
            if not isinstance(func_op, func.FuncOp):
                raise OpError(schedule, "sched.schedule must be inside the te function it schedules (a func.func).")
        state = ScheduleState(func_op)
        if schedule is not None:
            for op in schedule.body.block.ops:
                state._apply(op)
        state._bypass_inlined_copies()
        state._check_final(schedule)
        state._check_tensorized()
        return state

    def _stage(self, op: Operation, value: SSAValue) -> Stage:
        s = self._handles.get(value)
        assert isinstance(s, Stage), "sched verifier guarantees stage handles"
        if s.attach == "inline":
            raise OpError(op, f"stage '{s.name}' is inlined (sched.compute_inline): it has no loops to schedule.")
        return s

    def _axis(self, op: Operation, value: SSAValue) -> IterVar:
        v = self._handles.get(value)
        assert isinstance(v, IterVar)
        if not v.valid:
            raise OpError(
                op,
                f"axis '{v.name}' of stage '{v.stage.name}' was replaced by sched.cache_write; "
                "take the stage's axes again after the cache_write.",
            )
        return v

    def _leaf(self, op: Operation, value: SSAValue) -> IterVar:
        v = self._axis(op, value)
        if v not in v.stage.leaves:
            raise OpError(
                op,
                f"axis '{v.name}' of stage '{v.stage.name}' was already split or fused; "
                "use the axes that replaced it.",
            )
        return v

    def _apply(self, op: Operation):
        match op:
            case sched.StageOp():
                stage = self.stage_of.get(op.tensor)
                if stage is None:
                    raise OpError(op, "sched.stage needs a function argument or a te.compute result.")
                self._handles[op.stage] = stage
            case sched.AxisOp():
                stage = self._stage(op, op.stage)
                name = op.axis_name.data
                match = [v for v in stage.root if v.name == name]
                if not match:
                    known = ", ".join(v.name for v in stage.root) or "none"
                    raise OpError(op, f"stage '{stage.name}' has no axis '{name}' (its axes: {known}).")
                self._handles[op.axis] = match[0]
            case sched.SplitOp():
                v = self._leaf(op, op.axis)
                self._no_annotation(op, v)
                factor = op.factor.data if op.factor else None
                nparts = op.nparts.data if op.nparts else None
                outer, inner = self._split(v, factor, nparts)
                self._handles[op.outer], self._handles[op.inner] = outer, inner
            case sched.TileOp():
                x, y = self._leaf(op, op.x), self._leaf(op, op.y)
                if x.stage is not y.stage or x is y:
                    raise OpError(op, "sched.tile takes two different axes of one stage.")
                fx, fy = (f.data for f in op.factors.data)
                xo, xi = self._split(x, fx, None)
                yo, yi = self._split(y, fy, None)
                self._reorder(op, [xo, yo, xi, yi])
                for res, v in zip(op.results, (xo, yo, xi, yi)):
                    self._handles[res] = v
            case sched.ReorderOp():
                self._reorder(op, [self._leaf(op, a) for a in op.axes])
            case sched.FuseOp():
                axes = [self._leaf(op, a) for a in op.axes]
                self._handles[op.fused] = self._fuse(op, axes)
            case sched.ComputeAtOp():
                self._compute_at(op, self._stage(op, op.stage), self._leaf(op, op.axis))
            case sched.ComputeInlineOp():
                self._compute_inline(op, self._stage(op, op.stage))
            case sched.CacheReadOp():
                readers = [self._stage(op, r) for r in op.readers]
                self._handles[op.cache] = self._cache_read(op, self._stage(op, op.stage), op.scope.data, readers)
            case sched.CacheWriteOp():
                self._handles[op.cache] = self._cache_write(op, self._stage(op, op.stage), op.scope.data)
            case sched.VectorizeOp():
                self._annotate(op, self._leaf(op, op.axis), "vectorized")
            case sched.ParallelOp():
                self._annotate(op, self._leaf(op, op.axis), "parallel")
            case sched.UnrollOp():
                self._annotate(op, self._leaf(op, op.axis), "unrolled")
            case sched.TensorizeOp():
                self._tensorize(op, self._leaf(op, op.axis))
            case sched.VThreadOp():
                self._annotate(op, self._leaf(op, op.axis), "vthread")
            case sched.BindOp():
                self._bind(op, self._leaf(op, op.axis), op.thread.data)
            case sched.SetScopeOp():
                self._set_scope(op, self._stage(op, op.stage), op.scope.data)
            case _:
                raise OpError(op, f"'{op.name}' is not a schedule primitive.")

    # -- primitives ---------------------------------------------------------

    def _split(self, v: IterVar, factor: int | None, nparts: int | None):
        s = v.stage
        outer = IterVar(f"{v.name}.outer", v.kind, s)
        inner = IterVar(f"{v.name}.inner", v.kind, s)
        s.relations.append(Split(v, outer, inner, factor, nparts))
        pos = s.leaves.index(v)
        s.leaves[pos : pos + 1] = [outer, inner]
        self._move_attachments([v], outer)
        return outer, inner

    def _move_attachments(self, old: list[IterVar], new: IterVar):
        """Stages computed at a loop that a split or fuse replaces are computed at
        the loop that takes its place: the outer part of a split (which runs each
        iteration of the old loop's body as its inner part), the fused loop."""
        for p in self.stages:
            if p.attach == "at" and any(p.attach_axis is v for v in old):
                p.attach_axis = new

    def _reorder(self, op: Operation, axes: list[IterVar]):
        stage = axes[0].stage
        if any(a.stage is not stage for a in axes):
            raise OpError(op, "sched.reorder takes axes of one stage.")
        positions = sorted(stage.leaves.index(a) for a in axes)
        for pos, a in zip(positions, axes):
            stage.leaves[pos] = a

    def _fuse(self, op: Operation, axes: list[IterVar]) -> IterVar:
        stage = axes[0].stage
        if any(a.stage is not stage for a in axes):
            raise OpError(op, "sched.fuse takes axes of one stage.")
        kinds = {a.kind for a in axes}
        if len(kinds) > 1:
            raise OpError(op, "sched.fuse cannot fuse a reduce axis with a spatial axis.")
        pos = [stage.leaves.index(a) for a in axes]
        if pos != list(range(pos[0], pos[0] + len(axes))):
            raise OpError(
                op,
                "sched.fuse takes adjacent axes, outermost first "
                f"(the current order is {', '.join(v.name for v in stage.leaves)}).",
            )
        for a in axes:
            self._no_annotation(op, a)
        fused = IterVar(".".join(a.name for a in axes) + ".fused", axes[0].kind, stage)
        stage.relations.append(Fuse(list(axes), fused))
        stage.leaves[pos[0] : pos[-1] + 1] = [fused]
        self._move_attachments(axes, fused)
        return fused

    def _no_annotation(self, op: Operation, v: IterVar):
        if v.annotation != "serial":
            raise OpError(op, f"axis '{v.name}' is already {v.annotation}; split or fuse before annotating.")

    def _bind(self, op: Operation, v: IterVar, thread: str):
        if v.kind == "reduce":
            raise OpError(
                op,
                f"cannot bind reduce axis '{v.name}' of stage '{v.stage.name}' to {thread}: its "
                "iterations accumulate into the same element, and cross-thread reductions are "
                "not supported yet; bind a spatial axis.",
            )
        taken = next((w for w in v.stage.leaves if w is not v and w.annotation == thread), None)
        if taken is not None:
            raise OpError(op, f"{thread} is already bound to axis '{taken.name}' of stage '{v.stage.name}'.")
        self._annotate(op, v, thread)

    def _annotate(self, op: Operation, v: IterVar, kind: str):
        if v.annotation != "serial" and v.annotation != kind:
            raise OpError(op, f"axis '{v.name}' is already {v.annotation}.")
        if kind == "vthread" and v.kind == "reduce":
            raise OpError(
                op,
                f"cannot run reduce axis '{v.name}' of stage '{v.stage.name}' as virtual "
                "threads: its iterations accumulate into the same element; bind a spatial axis.",
            )
        if kind in ("vectorized", "parallel") and v.kind == "reduce":
            what = "vectorize" if kind == "vectorized" else "parallelize"
            raise OpError(
                op,
                f"cannot {what} reduce axis '{v.name}' of stage '{v.stage.name}': its "
                "iterations accumulate into the same element; "
                + ("vectorize a spatial axis instead." if kind == "vectorized" else "parallelize a spatial axis instead."),
            )
        v.annotation = kind
        v.annotation_op = op

    def _compute_at(self, op: Operation, producer: Stage, axis: IterVar):
        consumer = axis.stage
        if producer.kind == "input":
            raise OpError(op, f"'{producer.name}' is an input; only computed stages can be computed at a loop.")
        if producer.is_output:
            raise OpError(op, f"'{producer.name}' is a function result; it must be computed at the root.")
        if consumer is producer:
            raise OpError(op, f"cannot compute stage '{producer.name}' inside its own loop '{axis.name}'.")
        s = consumer
        while s.attach == "at":
            if s.attach_stage is producer:
                raise OpError(op, f"computing '{producer.name}' at '{axis.name}' would nest it inside itself.")
            s = s.attach_stage
        producer.attach, producer.attach_stage, producer.attach_axis = "at", consumer, axis
        producer.attach_op = op

    def _compute_inline(self, op: Operation, stage: Stage):
        if stage.kind == "copy":
            self._inline_copy(op, stage)
            return
        if stage.kind != "compute" or stage.compute is None:
            raise OpError(op, f"only a te.compute or a copy stage can be inlined, and '{stage.name}' is neither.")
        if stage.is_output:
            raise OpError(op, f"'{stage.name}' is a function result and cannot be inlined.")
        if stage.compute.reduce is not None:
            raise OpError(op, f"'{stage.name}' is a reduction and cannot be inlined.")
        if stage.relations or any(v.annotation != "serial" for v in stage.root):
            raise OpError(op, f"'{stage.name}' has loop transformations; an inlined stage has no loops.")
        stage.attach = "inline"
        stage.attach_op = op
        self.inlined_computes.append(op)

    def _inline_copy(self, op: Operation, stage: Stage):
        """A copy stage (a cache_read, or the stage a cache_write left behind) is
        inlined by reading its source directly: after a cache_write, a fused
        epilogue then reads the accumulators, with no copy in between."""
        if stage.is_output:
            raise OpError(op, f"'{stage.name}' is a function result and cannot be inlined.")
        if stage.relations or stage.attach != "root" or any(v.annotation != "serial" for v in stage.root):
            raise OpError(op, f"'{stage.name}' has loop transformations; an inlined stage has no loops.")
        stage.attach = "inline"
        stage.attach_op = op

    def _bypass_inlined_copies(self):
        def resolve(s: Stage | None) -> Stage | None:
            while s is not None and s.kind == "copy" and s.attach == "inline":
                s = s.source
            return s

        for s in self.stages:
            s.reads = {key: resolve(p) for key, p in s.reads.items()}
            s.source = resolve(s.source)

    def _cache_read(self, op: Operation, source: Stage, scope: str, readers: list[Stage]) -> Stage:
        names = (
            [v.name for v in source.spatial_root]
            if source.root
            else [f"ax{d}" for d in range(len(source.shape))]
        )
        cache = Stage(f"{source.name}.{scope}", "copy", source.shape, source.element_type)
        cache.source = source
        cache.scope, cache.scope_explicit = scope, True
        cache._make_root(names)
        for r in readers:
            if source not in r.inputs():
                raise OpError(op, f"stage '{r.name}' does not read '{source.name}'.")
            for key, s in r.reads.items():
                if s is source:
                    r.reads[key] = cache
            if r.source is source:
                r.source = cache
        self._insert_before(cache, min(self.stages.index(r) for r in readers))
        return cache

    def _cache_write(self, op: Operation, stage: Stage, scope: str) -> Stage:
        if stage.kind != "compute":
            raise OpError(op, f"sched.cache_write needs a computed stage; '{stage.name}' is not one.")
        if stage.relations or stage.attach != "root" or any(v.annotation != "serial" for v in stage.root):
            raise OpError(
                op,
                f"stage '{stage.name}' is already scheduled; apply sched.cache_write before "
                "splitting, annotating or attaching it.",
            )
        cache = Stage(f"{stage.name}.{scope}", "compute", stage.shape, stage.element_type)
        cache.compute, cache.reads, cache.scope = stage.compute, stage.reads, scope
        cache.scope_explicit = True
        cache._make_root([v.name for v in stage.spatial_root], [v.name for v in stage.reduce_root])
        for v in stage.root:
            v.valid = False
        stage.kind, stage.compute, stage.reads, stage.source = "copy", None, {}, cache
        stage._make_root([v.name for v in stage.spatial_root])
        self._insert_before(cache, self.stages.index(stage))
        return cache

    def _set_scope(self, op: Operation, stage: Stage, scope: str):
        if stage.kind == "input":
            raise OpError(op, f"'{stage.name}' is an input; its buffer is the caller's (use sched.cache_read).")
        if stage.is_output:
            raise OpError(op, f"'{stage.name}' is a function result; it is written to the caller's buffer.")
        stage.scope, stage.scope_explicit = scope, True

    def _insert_before(self, new: Stage, index: int):
        self.stages.insert(index, new)

    # -- whole-schedule checks ---------------------------------------------

    def readers(self, producer: Stage) -> list[Stage]:
        return [s for s in self.stages if producer in s.inputs() and s.attach != "inline"]

    def encloses(self, consumer: Stage, axis: IterVar, reader: Stage) -> bool:
        """Whether `reader` runs inside loop `axis` of `consumer` (or is `consumer`)."""
        s = reader
        while s is not consumer:
            if s.attach != "at":
                return False
            if s.attach_stage is consumer:
                order = consumer.loop_order
                return order.index(s.attach_axis) >= order.index(axis)
            s = s.attach_stage
        return True

    def _check_final(self, schedule: Operation | None):
        for p in self.stages:
            if p.attach != "at":
                continue
            c, axis = p.attach_stage, p.attach_axis
            readers = self.readers(p)
            if not any(r is c or self.encloses(c, axis, r) for r in readers):
                raise OpError(
                    p.attach_op,
                    f"loop '{axis.name}' of stage '{c.name}' does not enclose a consumer of "
                    f"'{p.name}': neither '{c.name}' nor a stage computed inside that loop reads it.",
                )
            outside = [r for r in readers if not self.encloses(c, axis, r)]
            if outside:
                raise OpError(
                    p.attach_op,
                    f"'{p.name}' is also read by '{outside[0].name}', outside loop '{axis.name}' "
                    f"of '{c.name}'; compute it at the root or give each reader its own cache_read.",
                )
        for s in self.stages:
            vectorized = [v for v in s.leaves if v.annotation == "vectorized"]
            if len(vectorized) > 1:
                raise OpError(
                    vectorized[1].annotation_op,
                    f"stage '{s.name}' already has vectorized axis '{vectorized[0].name}'; "
                    "vectorize one axis per stage (fuse them first).",
                )
            for v in vectorized:
                inside = [p for p in self.stages if p.attach == "at" and p.attach_axis is v]
                if inside:
                    raise OpError(
                        v.annotation_op,
                        f"vectorized axis '{v.name}' cannot hold stage '{inside[0].name}' "
                        "(sched.compute_at); attach it one loop further out.",
                    )

    def topological_order(self) -> list[Stage]:
        """Every stage after the stages it reads (inputs included)."""
        order: list[Stage] = []

        def visit(s: Stage):
            if s in order:
                return
            for p in s.inputs():
                visit(p)
            order.append(s)

        for s in self.stages:
            visit(s)
        return order

    # -- tensorize -------------------------------------------------------------

    def _tensorize(self, op: sched.TensorizeOp, axis: IterVar):
        from tilecraft.dialects.tensor_intrin import lookup, unknown_message

        if lookup(op.intrin.data) is None:
            raise OpError(op, f"sched.tensorize: {unknown_message(op.intrin.data)}.")
        stage = axis.stage
        if stage.tensorize_op is not None:
            raise OpError(op, f"stage '{stage.name}' is already tensorized (at '{stage.tensorize_axis.name}').")
        stage.tensorize_axis, stage.tensorize_op = axis, op

    def _check_tensorized(self):
        """What the replay can check of a tensorized region by itself: the axis is
        still a loop, the region's loops stay serial and no stage is computed
        inside them. Whether the region computes what the intrinsic computes
        needs index analysis and the inferred bounds: convert-te-to-loop checks
        it before it changes anything (`analysis.tensorize`), at this op."""
        for s in self.stages:
            if s.tensorize_op is None:
                continue
            op, axis = s.tensorize_op, s.tensorize_axis
            if axis not in s.leaves:
                raise OpError(
                    op,
                    f"axis '{axis.name}' was split or fused after sched.tensorize; "
                    "tensorize the stage's final loops.",
                )
            order = s.loop_order
            inner = order[order.index(axis) :]
            for v in inner:
                if v.annotation != "serial":
                    raise OpError(
                        v.annotation_op,
                        f"loop '{v.name}' is in the region of '{s.name}' that sched.tensorize "
                        f"replaces (under '{axis.name}'); it cannot be {v.annotation}.",
                    )
            for p in self.stages:
                if p.attach == "at" and p.attach_stage is s and p.attach_axis in inner:
                    raise OpError(
                        p.attach_op,
                        f"stage '{p.name}' is computed inside the tensorized region of '{s.name}' "
                        f"(under '{axis.name}'); attach it outside that loop.",
                    )


def _arg_names(func_op: func.FuncOp) -> list[str]:
    names = []
    arg_attrs = func_op.arg_attrs.data if func_op.arg_attrs else None
    for n, arg in enumerate(func_op.body.block.args):
        name = None
        if arg_attrs is not None and n < len(arg_attrs):
            attr = arg_attrs[n].data.get("tc.name")
            if attr is not None:
                name = attr.data
        names.append(name or arg.name_hint or f"arg{n}")
    return names


def find_schedule(func_op: func.FuncOp) -> sched.ScheduleOp | None:
    for op in func_op.body.block.ops:
        if isinstance(op, sched.ScheduleOp):
            return op
    return None


def leaf_extents(stage: Stage, root_extents: list) -> dict[IterVar, Any]:
    """Extent of every axis of `stage` (root, intermediate and leaf) given the extents
    of its root axes: ints, or index expressions of sizes known when the program
    runs (`analysis.bounds.Size`; anything with `+` and `floordiv`)."""
    ext: dict[IterVar, Any] = dict(zip(stage.root, root_extents))
    for rel in stage.relations:
        if isinstance(rel, Split):
            e = ext[rel.parent]
            if rel.factor is not None:
                ext[rel.outer], ext[rel.inner] = _ceildiv(e, rel.factor), rel.factor
            else:
                ext[rel.outer], ext[rel.inner] = rel.nparts, _ceildiv(e, rel.nparts)
        else:
            total = 1
            for p in rel.parents:
                total = ext[p] * total
            ext[rel.fused] = total
    return ext


def _ceildiv(e, d: int):
    return -(-e // d) if isinstance(e, int) else (e + (d - 1)).floordiv(d)


def read_producers(state: ScheduleState) -> dict[te.ReadOp, Stage]:
    """The stage each te.read reads (a cache copy where the schedule put one)."""
    producers: dict[te.ReadOp, Stage] = {}
    for s in state.stages:
        if s.compute is None:
            continue
        for op in s.compute.body.walk():
            if isinstance(op, te.ReadOp):
                producers[op] = s.reads[op.tensor]
    return producers
