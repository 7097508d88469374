"""Schedules: `create_schedule`, `Schedule` and its stages (TVM's `s[C]`), cache stages.

A stage's primitives check their arguments at once and are recorded as steps;
`tilecraft.frontends.te.emit` replays the steps into a `sched.schedule` region when
a function is built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import FileLineColLoc

from tilecraft.utils.unsupported import UnsupportedError
from tilecraft.dialects import sched as sched_ir
from tilecraft.frontends.te.expr import IterVar
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor, _caller_location

if TYPE_CHECKING:
    from tilecraft.frontends.te.emit import _ScheduleEmitter


@dataclass(eq=False)
class StageView:
    """What `s[T].op` gives for a stage whose axes are not the compute's own
    (a cache stage, or a stage after cache_write)."""

    name: str
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...] = ()


@dataclass(eq=False)
class CacheTensor:
    """The tensor of a cache stage: usable with `s[...]`, not in expressions."""

    shape: tuple[int, ...]
    dtype: str
    op: StageView
    scope: str

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key):
        raise ValueError(
            f"{self.name} is a cache stage, only for scheduling; computes read the "
            "original tensor and the schedule redirects the reads"
        )


# A step emits one schedule op through an `_ScheduleEmitter`.
_Step = Callable[["_ScheduleEmitter"], None]


@dataclass(eq=False)
class Stage:
    """The schedule of one tensor: TVM's `s[C]`. Primitives are recorded as steps."""

    schedule: Schedule
    tensor: Tensor | CacheTensor
    op: ComputeOp | PlaceholderOp | StageView
    root_names: dict[int, str]  # id(root IterVar) -> name in sched.axis
    leaf_iter_vars: list[IterVar] = field(default_factory=list)
    attach: str = "root"  # "root", "at" or "inline"
    _attach_step: _Step | None = None
    _retired: dict[int, str] = field(default_factory=dict)  # id -> why it is gone
    # id(outer or inner) -> (parent, outer, inner, inner extent): for rfactor
    _splits: dict[int, tuple] = field(default_factory=dict)
    _touched: bool = False

    def __post_init__(self):
        self.leaf_iter_vars = list(self.op.axis) + list(self.op.reduce_axis)

    # --- bookkeeping that gives errors at the user's line ---------------------------

    def _leaf(self, axis) -> int:
        for n, a in enumerate(self.leaf_iter_vars):
            if a is axis:
                return n
        name = getattr(axis, "name", repr(axis))
        why = self._retired.get(id(axis))
        if why:
            raise ValueError(f"axis {name!r} of stage {self.tensor.name} {why}")
        raise ValueError(f"axis {name!r} is not an axis of stage {self.tensor.name}")

    def _record(self, step: _Step):
        self._touched = True
        self.schedule._steps.append((step, _caller_location(), self))

    # --- primitives ---------------------------------------------------------------

    def split(self, axis: IterVar, factor: int | None = None, nparts: int | None = None):
        """Split `axis` into (outer, inner): inner extent `factor`, or `nparts` outer."""
        pos = self._leaf(axis)
        if (factor is None) == (nparts is None):
            raise ValueError("split takes exactly one of factor= or nparts=")
        value = factor if factor is not None else nparts
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"split factor/nparts must be a positive int, not {value!r}")
        ext = axis.extent  # a split that does not divide it gets a guarded tail
        if factor is not None:
            outer_ext, inner_ext = -(-ext // factor), factor
        else:
            outer_ext, inner_ext = nparts, -(-ext // nparts)
        outer = IterVar(f"{axis.name}.outer", (0, outer_ext), axis.kind)
        inner = IterVar(f"{axis.name}.inner", (0, inner_ext), axis.kind)
        self.leaf_iter_vars[pos : pos + 1] = [outer, inner]
        self._retired[id(axis)] = "was already split; use the axes split returned"
        self._splits[id(outer)] = self._splits[id(inner)] = (axis, outer, inner, inner_ext)

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.SplitOp(e.axis(self, axis), factor=factor, nparts=nparts))
            e.bind(self, outer, op.outer)
            e.bind(self, inner, op.inner)

        self._record(step)
        return outer, inner

    def tile(self, x: IterVar, y: IterVar, x_factor: int, y_factor: int):
        """Split x and y and order the four (xo, yo, xi, yi); returns them."""
        px, py = self._leaf(x), self._leaf(y)
        if x is y:
            raise ValueError("tile takes two different axes")
        for f in (x_factor, y_factor):
            if not isinstance(f, int) or f <= 0:
                raise ValueError(f"tile factors must be positive ints, not {f!r}")
        xo = IterVar(f"{x.name}.outer", (0, -(-x.extent // x_factor)), x.kind)
        xi = IterVar(f"{x.name}.inner", (0, x_factor), x.kind)
        yo = IterVar(f"{y.name}.outer", (0, -(-y.extent // y_factor)), y.kind)
        yi = IterVar(f"{y.name}.inner", (0, y_factor), y.kind)
        # As TVM: split both, then put the four in the places they occupy, in order.
        leaves = self.leaf_iter_vars
        leaves[px : px + 1] = [xo, xi]
        py = py + 1 if py > px else py
        leaves[py : py + 1] = [yo, yi]
        self._place([xo, yo, xi, yi])
        for a in (x, y):
            self._retired[id(a)] = "was already tiled; use the axes tile returned"

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.TileOp(e.axis(self, x), e.axis(self, y), x_factor, y_factor))
            for iv, res in zip((xo, yo, xi, yi), op.results):
                e.bind(self, iv, res)

        self._record(step)
        return xo, yo, xi, yi

    def _place(self, order: Sequence[IterVar]):
        positions = sorted(self._leaf(a) for a in order)
        for pos, a in zip(positions, order):
            self.leaf_iter_vars[pos] = a

    def reorder(self, *axes: IterVar):
        """Put these axes, in this order, in the places they occupy."""
        axes = _flatten_axes(axes)
        if len({id(a) for a in axes}) != len(axes):
            raise ValueError("reorder names an axis twice")
        self._place(axes)

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ReorderOp([e.axis(self, a) for a in axes]))

        self._record(step)

    def fuse(self, *axes: IterVar) -> IterVar:
        """Fuse adjacent axes (outer first) into one."""
        axes = _flatten_axes(axes)
        if len(axes) < 2:
            raise ValueError("fuse takes at least two axes")
        positions = [self._leaf(a) for a in axes]
        if positions != list(range(positions[0], positions[0] + len(axes))):
            raise ValueError(
                "fuse needs adjacent axes, outer first; the current order is "
                + ", ".join(a.name for a in self.leaf_iter_vars)
            )
        kinds = {a.kind for a in axes}
        if len(kinds) != 1:
            raise ValueError("fuse cannot mix spatial and reduce axes")
        fused = IterVar(
            ".".join(a.name for a in axes) + ".fused",
            (0, math.prod(a.extent for a in axes)),
            axes[0].kind,
        )
        self.leaf_iter_vars[positions[0] : positions[-1] + 1] = [fused]
        for a in axes:
            self._retired[id(a)] = "was already fused; use the axis fuse returned"

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.FuseOp([e.axis(self, a) for a in axes]))
            e.bind(self, fused, op.fused)

        self._record(step)
        return fused

    def compute_at(self, parent: Stage, axis: IterVar):
        """Compute this stage inside `parent`'s loop over `axis`."""
        if not isinstance(parent, Stage):
            raise ValueError("compute_at takes the consumer's stage, e.g. s[C]")
        parent._leaf(axis)
        parent._touched = True

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ComputeAtOp(e.stage(self), e.axis(parent, axis)))

        self._set_attach("at", step)

    def compute_inline(self):
        """Substitute this (injective) stage's expression into its readers. An
        output of the schedule cannot be inlined (as in TVM): it has no readers
        to take its expression, and it is what the function returns."""
        if any(self.tensor is t for t in self.schedule.outputs):
            name = self.tensor.name
            raise ValueError(
                f"s[{name}].compute_inline(): '{name}' is an output of the schedule "
                "(te.create_schedule), so it is computed and stored, never inlined; "
                "inline the stages it reads instead"
            )

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ComputeInlineOp(e.stage(self)))

        self._set_attach("inline", step)

    def compute_root(self):
        """Compute this stage at the root again (TVM's default): undoes an earlier
        compute_at or compute_inline of it."""
        self._set_attach("root", None)

    def _set_attach(self, attach: str, step: _Step | None):
        if self._attach_step is not None:  # the last attach decision wins, as in TVM
            self.schedule._steps = [s for s in self.schedule._steps if s[0] is not self._attach_step]
        self.attach, self._attach_step = attach, step
        if step is not None:
            self._record(step)

    def __getattr__(self, name: str):
        if name in _UNSUPPORTED_PRIMITIVES:
            raise UnsupportedError(f"s[{self.tensor.name}].{name}: {_UNSUPPORTED_PRIMITIVES[name]}")
        raise AttributeError(f"a te Stage has no primitive {name!r}")

    def _annotate(self, op_class, axis: IterVar):
        self._leaf(axis)

        def step(e: _ScheduleEmitter):
            e.add(op_class(e.axis(self, axis)))

        self._record(step)

    def vectorize(self, axis: IterVar):
        """Run `axis` as SIMD lanes."""
        self._annotate(sched_ir.VectorizeOp, axis)

    def parallel(self, axis: IterVar):
        """Run `axis`'s iterations on all cores."""
        self._annotate(sched_ir.ParallelOp, axis)

    def unroll(self, axis: IterVar):
        """Unroll `axis` completely."""
        self._annotate(sched_ir.UnrollOp, axis)

    def tensorize(self, axis: IterVar, intrin):
        """Replace the loops from `axis` inwards by a tensor intrinsic
        (`te.decl_tensor_intrin`, or the name of a registered one); the schedule
        replay checks that they compute what it computes."""
        from tilecraft.dialects.tensor_intrin import TensorIntrin, lookup, unknown_message

        self._leaf(axis)
        name = intrin.name if isinstance(intrin, TensorIntrin) else intrin
        if not isinstance(name, str) or lookup(name) is None:
            raise ValueError(f"s[{self.tensor.name}].tensorize: {unknown_message(str(name))}")
        if isinstance(intrin, TensorIntrin) and lookup(name) is not intrin:
            raise ValueError(
                f"s[{self.tensor.name}].tensorize: intrinsic {name} was declared again since; "
                "schedules name intrinsics, so use the latest declaration"
            )

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.TensorizeOp(e.axis(self, axis), name))

        self._record(step)

    def set_scope(self, scope: str):
        """Keep this computed stage's buffer in `scope` (TVM's `set_scope`)."""
        scope = _scope_name(scope)
        _check_scope(scope)

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.SetScopeOp(e.stage(self), scope))

        self._record(step)

    def vthread(self, axis: IterVar):
        """Run `axis`'s iterations as virtual threads (`inject-virtual-threads`)."""
        self._annotate(sched_ir.VThreadOp, axis)

    def bind(self, axis: IterVar, thread: ThreadAxis):
        """TVM's `bind`: to a GPU index (`te.thread_axis("blockIdx.x")`, ...
        `"threadIdx.z"`: `sched.bind`, built for target "cuda") or to virtual
        threads (`"cthread"`, `"vthread"`: `vthread(axis)`)."""
        if not isinstance(thread, ThreadAxis):
            raise UnsupportedError(f"s[{self.tensor.name}].bind takes a te.thread_axis, not {thread!r}")
        if thread.tag in VIRTUAL_THREAD_TAGS:
            self.vthread(axis)
            return
        self._leaf(axis)

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.BindOp(e.axis(self, axis), thread.tag))

        self._record(step)


_UNSUPPORTED_PRIMITIVES = {
    "env_threads": "env_threads is not supported; bind axes to te.thread_axis instead",
    "set_store_predicate": "store predicates are not supported",
    "pragma": "pragmas are not supported",
    "prefetch": "prefetch is not supported",
    "storage_align": "storage_align is not supported",
    "double_buffer": "double_buffer is not supported",
    "transform_layout": "transform_layout is not supported",
    "rolling_buffer": "rolling_buffer is not supported",
}


def _flatten_axes(axes) -> list[IterVar]:
    if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
        return list(axes[0])
    return list(axes)


def _root_names(op) -> dict[int, str]:
    if isinstance(op, ComputeOp):
        return dict(op.axis_names)
    return {id(a): a.name for a in tuple(op.axis) + tuple(op.reduce_axis)}


class Schedule:
    """TVM's schedule: `s = te.create_schedule(C)`, then `s[C].split(...)` etc."""

    def __init__(self, outputs: Sequence[Tensor]):
        self.outputs = list(outputs)
        self._stages: dict[int, Stage] = {}
        self._steps: list[tuple[_Step, FileLineColLoc | None, Stage]] = []
        self._known: dict[int, Tensor | CacheTensor] = {}
        self._ops: dict[int, ComputeOp] = {}  # id(tensor) -> its definition after rfactor
        for t in _reachable(self.outputs):
            self._known[id(t)] = t

    def __getitem__(self, tensor) -> Stage:
        if isinstance(tensor, ComputeOp):
            tensor = next((t for t in self._known.values() if t.op is tensor), tensor)
        if id(tensor) not in self._known:
            name = getattr(tensor, "name", repr(tensor))
            raise ValueError(f"tensor {name} is not part of this schedule")
        stage = self._stages.get(id(tensor))
        if stage is None:
            stage = Stage(self, tensor, tensor.op, _root_names(tensor.op))
            self._stages[id(tensor)] = stage
        return stage

    @property
    def stages(self) -> list[Stage]:
        return [self[t] for t in self._known.values()]

    def cache_read(self, tensor, scope: str, readers) -> CacheTensor:
        """A copy of `tensor` in `scope` that `readers` read instead of it."""
        scope = _scope_name(scope)
        _check_scope(scope)
        readers = list(readers) if isinstance(readers, (list, tuple)) else [readers]
        if not readers:
            raise ValueError("cache_read needs at least one reader")
        src = self[tensor]
        reader_stages = [self[r] for r in readers]
        # The copy's axes are named like the source's spatial axes (ax0, ... for inputs).
        names = [src.root_names[id(a)] for a in src.op.axis]
        names = names or [f"ax{d}" for d in range(tensor.ndim)]
        axes = tuple(IterVar(n, (0, d)) for n, d in zip(names, tensor.shape))
        view = StageView(f"{tensor.name}.{scope}", axes)
        cache = CacheTensor(tensor.shape, tensor.dtype, view, scope)
        cache_stage = self._add_cache_stage(cache)

        def step(e: _ScheduleEmitter):
            readers = [e.stage(r) for r in reader_stages]
            op = e.add(sched_ir.CacheReadOp(e.stage(src), scope, readers))
            e.bind_stage(cache_stage, op.cache)

        src._record(step)
        return cache

    def cache_write(self, tensor, scope: str) -> CacheTensor:
        """Compute `tensor` into a `scope` buffer (the returned cache's stage, with
        fresh axes), then copy it out; `tensor`'s stage becomes that copy and keeps
        the compute's spatial axes (`C.op.axis`), as in TVM."""
        scope = _scope_name(scope)
        _check_scope(scope)
        stage = self[tensor]
        if not isinstance(stage.op, ComputeOp):
            raise ValueError(f"cache_write needs a computed tensor, not {tensor.name}")
        if stage._touched:
            raise ValueError(
                f"cache_write of {tensor.name} must come before any other scheduling "
                "of its stage"
            )
        op = stage.op
        names = op.axis_names
        fresh = tuple(IterVar(names[id(a)], a.dom, a.kind) for a in op.axis)
        fresh_red = tuple(IterVar(names[id(a)], a.dom, a.kind) for a in op.reduce_axis)
        view = StageView(f"{tensor.name}.{scope}", fresh, fresh_red)
        cache = CacheTensor(tensor.shape, tensor.dtype, view, scope)
        cache_stage = self._add_cache_stage(cache)
        # The original stage becomes the copy out of the cache. As in TVM, it keeps
        # the compute's spatial axes, so `C.op.axis` still names its loops; the
        # reduce axes move to the cache stage (`s[CC].op.reduce_axis`).
        stage.op = StageView(tensor.name, tuple(op.axis))
        stage.root_names = {id(a): names[id(a)] for a in op.axis}
        for a in op.reduce_axis:
            stage._retired[id(a)] = (
                "moved to the cache stage with cache_write; use "
                f"s[{cache.name}].op.reduce_axis"
            )
        stage.leaf_iter_vars = list(stage.op.axis)

        def step(e: _ScheduleEmitter):
            cw = e.add(sched_ir.CacheWriteOp(e.stage(stage), scope))
            e.bind_stage(cache_stage, cw.cache)

        stage._record(step)
        return cache

    def rfactor(self, tensor: Tensor, axis: IterVar, factor_axis: int = 0) -> Tensor:
        """Factor a reduction over `axis` (a reduce axis of `tensor`'s stage, or a
        part of one that was split) into a new stage `T.rf` that keeps `axis` as a
        spatial axis (at position `factor_axis`) and reduces over the rest; the
        stage of `tensor` then reduces `T.rf` over `axis`. Returns `T.rf`."""
        from tilecraft.frontends.te.rfactor import factor_reduction

        stage = self[tensor]
        rf, new_op = factor_reduction(stage, tensor, axis, factor_axis)
        self._known[id(rf)] = rf
        self._ops[id(tensor)] = new_op
        # The stage of `tensor` starts again from its new definition; the steps
        # recorded on it (the split that made `axis`) now describe `T.rf`.
        self._steps = [st for st in self._steps if st[2] is not stage]
        for a in stage.leaf_iter_vars:
            stage._retired[id(a)] = f"belongs to {tensor.name} before rfactor; use s[{tensor.name}].op.axis"
        stage.op, stage.root_names = new_op, dict(new_op.axis_names)
        stage.leaf_iter_vars = list(new_op.axis) + list(new_op.reduce_axis)
        stage._splits, stage._touched = {}, False
        return rf

    def normalize(self) -> Schedule:
        """TVM normalizes loops to start at 0; tilecraft's loops always do."""
        return self

    def __getattr__(self, name: str):
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedError(
            f"s.{name}: not supported by tilecraft's te schedules (they have cache_read, "
            "cache_write, rfactor and the stage primitives of s[T])"
        )

    def _add_cache_stage(self, cache: CacheTensor) -> Stage:
        self._known[id(cache)] = cache
        return self[cache]


def _check_scope(scope: str):
    if scope not in sched_ir.MEMORY_SCOPES:
        raise ValueError(
            f"memory scope must be one of {', '.join(sched_ir.MEMORY_SCOPES)}, not {scope!r}"
        )


# Scope names as VTA's environment spells them (`env.inp_scope`, ...).
_SCOPE_ALIASES = {
    "local.inp_buffer": "inp_buffer",
    "local.wgt_buffer": "wgt_buffer",
    "local.acc_buffer": "acc_buffer",
}


def _scope_name(scope: str) -> str:
    return _SCOPE_ALIASES.get(scope, scope)


@dataclass(frozen=True)
class ThreadAxis:
    """What `te.thread_axis("threadIdx.x")` gives: a GPU index or virtual thread
    axis to `bind` to."""

    tag: str
    name: str


VIRTUAL_THREAD_TAGS = ("cthread", "vthread")


def thread_axis(dom=None, tag: str = "", name: str = "", span=None) -> ThreadAxis:
    """TVM's `te.thread_axis`: a GPU index ("blockIdx.x"/"y"/"z",
    "threadIdx.x"/"y"/"z": `sched.bind`) or virtual threads, "cthread" (as VTA
    uses) or "vthread" (`te.thread_axis("vthread", name="vx")`: `sched.vthread`).
    The axis bound to it gives the extent."""
    if isinstance(dom, str) and not tag:
        dom, tag = None, dom
    if dom is not None:
        raise UnsupportedError("te.thread_axis: a thread axis takes its extent from the bound axis; give no dom")
    if tag not in VIRTUAL_THREAD_TAGS + sched_ir.GPU_THREAD_TAGS:
        raise UnsupportedError(
            f"te.thread_axis: unknown thread tag {tag!r}; the tags are "
            f"{', '.join(sched_ir.GPU_THREAD_TAGS + VIRTUAL_THREAD_TAGS)}"
        )
    return ThreadAxis(tag, name or tag)


def create_schedule(outputs) -> Schedule:
    """A schedule for the output tensor(s) or op(s) (`C.op`, as TVM spells it) and
    everything they read."""
    items = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    tensors: list[Tensor] = []
    for t in items:
        if isinstance(t, ComputeOp):
            tensors.extend(t.siblings or t.outputs)
        elif isinstance(t, Tensor) and isinstance(t.op, ComputeOp):
            tensors.extend(t.op.siblings or [t])
        elif not isinstance(t, (Tensor, PlaceholderOp)) and hasattr(t, "outputs") and hasattr(t, "input_tensors"):
            tensors.extend(t.outputs)  # a te.extern or te.scan op
        elif isinstance(t, Tensor) and not isinstance(t.op, PlaceholderOp):
            tensors.append(t)
        else:
            raise ValueError(f"create_schedule takes computed tensors or their ops, not {t!r}")
    unique = list({id(t): t for t in tensors}.values())
    return Schedule(unique)


def _reachable(outputs: Sequence[Tensor], through_externs: bool = True, ops=None) -> list[Tensor]:
    """Tensors the outputs read, producers before consumers (depth-first post-order);
    without `through_externs`, a te.extern's tensor ends the walk like an input.
    `ops` redefines some tensors (by id), as `Schedule.rfactor` does."""
    order: list[Tensor] = []
    done: set[int] = set()

    def visit(t: Tensor):
        if id(t) in done:
            return
        done.add(id(t))
        op = ops.get(id(t), t.op) if ops else t.op
        if through_externs or isinstance(op, ComputeOp):
            for src in op.input_tensors:
                visit(src)
        order.append(t)

    for t in outputs:
        visit(t)
    return order

