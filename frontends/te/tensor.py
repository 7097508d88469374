"""Tensors and the operations that make them: `placeholder` and `compute`."""

from __future__ import annotations

import builtins
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from tilecraft.frontends.te.dtypes import INDEX, _check_dtype, _is_int, _is_integral
from tilecraft.frontends.te.expr import (
    Cast,
    Const,
    Expr,
    IterVar,
    Read,
    Reduce,
    _default_literal,
    _no_reduce,
    _walk,
    cast,
)


@dataclass(eq=False)
class PlaceholderOp:
    name: str
    axis: tuple[IterVar, ...] = ()
    reduce_axis: tuple[IterVar, ...] = ()
    input_tensors: tuple[Tensor, ...] = ()
    outputs: list[Tensor] = field(default_factory=list)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def output(self, index: int) -> Tensor:
        """TVM's `op.output(i)`: the op's i-th tensor."""
        return self.outputs[index]


@dataclass(eq=False)
class ComputeOp:
    """What `te.compute` made: its axes, its body and the names the IR gives them."""

    name: str
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...]
    body: Expr
    axis_names: dict[int, str]  # id(IterVar) -> name in the IR, unique in this compute
    location: FileLineColLoc | None = None
    outputs: list[Tensor] = field(default_factory=list)
    # The other computes of one tuple-valued te.compute (each output is its own op
    # here; TVM has one op with several outputs). A schedule covers them all.
    siblings: list[Tensor] = field(default_factory=list)
    # What a library records about this compute for its schedules (TVM's op attrs):
    # topi's tags, and the record of a conv2d, dense or Winograd compute.
    attrs: dict[str, object] = field(default_factory=dict)

    @property
    def num_outputs(self) -> int:
        return len(self.siblings) or 1

    def output(self, index: int) -> Tensor:
        """TVM's `op.output(i)`: the i-th tensor of a (tuple-valued) compute."""
        return (self.siblings or self.outputs)[index]

    @property
    def input_tensors(self) -> list[Tensor]:
        found: dict[int, Tensor] = {}
        for e in _walk(self.body):
            if isinstance(e, Read):
                found.setdefault(id(e.tensor), e.tensor)
        return list(found.values())


@dataclass(eq=False)
class Tensor:
    """A placeholder or the result of a compute; `A[i, j]` reads one element."""

    shape: tuple  # of ints, or int32 expressions of te.var sizes
    dtype: str
    op: PlaceholderOp | ComputeOp

    def __post_init__(self):
        self.op.outputs.append(self)

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key) -> Expr:
        indices = key if isinstance(key, tuple) else (key,)
        # `lambda *i: A[i]` passes a tuple; allow one level of nesting.
        flat = [x for i in indices for x in (i if isinstance(i, (tuple, list)) else (i,))]
        if len(flat) != len(self.shape):
            raise ValueError(
                f"tensor {self.name} has rank {len(self.shape)} but is indexed with "
                f"{len(flat)} indices"
            )
        checked = tuple(_index(x, n, self.name) for x, n in zip(flat, self.shape))
        return Read(self, checked, self.dtype)

    def __call__(self, *indices) -> Expr:
        return self[indices]

    def __repr__(self) -> str:
        return f"Tensor({self.name}, shape={self.shape}, dtype={self.dtype})"


def _index(x, extent, tensor: str) -> Expr:
    if _is_integral(x):
        if _is_integral(extent) and not 0 <= x < extent:
            raise ValueError(f"constant index {x} is out of bounds [0, {extent}) of {tensor}")
        return Const(int(x), INDEX)
    if not isinstance(x, Expr):
        raise ValueError(f"index of {tensor} must be an integer expression, not {x!r}")
    _no_reduce(x)
    if x.dtype == INDEX:
        return x
    if _is_int(x.dtype):
        return Cast(x, INDEX)
    raise ValueError(f"index of {tensor} must be an integer expression, not {x.dtype}")


def _shape(shape, what: str) -> tuple:
    """A shape of positive ints or int expressions of `te.var` sizes. A float that
    is a whole number (`N / bn` in Python 3) is cast to int, as TVM does."""
    shape = (shape,) if _is_integral(shape) or isinstance(shape, (float, Expr)) else tuple(shape)
    dims = []
    for d in shape:
        if isinstance(d, float) and d.is_integer():
            d = int(d)
        if isinstance(d, Expr) and _is_int(d.dtype):
            dims.append(d)
        elif _is_integral(d) and d > 0:
            dims.append(int(d))
        else:
            hint = " (a float that is not a whole number)" if isinstance(d, float) else ""
            raise ValueError(
                f"{what} needs a shape of positive ints or te.var sizes, not {shape!r}: "
                f"dimension {d!r}{hint}"
            )
    if not dims:
        raise ValueError(f"{what} needs a shape of at least one dimension, not {shape!r}")
    return tuple(dims)


def placeholder(shape, dtype: str | None = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor: `te.placeholder((M, K), "float32", name="A")` (dtype None is
    float32, as in TVM)."""
    return Tensor(_shape(shape, "te.placeholder"), _check_dtype(dtype or "float32"), PlaceholderOp(name))


def compute(shape, fcompute: Callable[..., Expr], name: str = "compute", tag: str = "", attrs=None) -> Tensor:
    """A tensor defined element by element: `te.compute((M, N), lambda i, j: ...)`.
    TVM's `tag` and `attrs` are accepted and not used.

    The lambda's parameter names name the axes; `lambda *i:` gives `i0, i1, ...`.
    """
    shape = _shape(shape, "te.compute")
    names = _lambda_names(fcompute, len(shape))
    axes = tuple(IterVar(n, (0, d)) for n, d in zip(names, shape))
    body = fcompute(*axes)
    from tilecraft.frontends.te.reducer import TupleReduce  # tuple-valued comm_reducer

    if isinstance(body, (tuple, list, TupleReduce)):
        return _tuple_compute(shape, axes, body, name)
    return _make_compute(shape, axes, body, name, _caller_location())


def _tuple_compute(shape, axes, bodies, name: str) -> list[Tensor]:
    """`B0, B1 = te.compute(shape, lambda i: (e0, e1))`: one compute per element,
    named `B.v0`, `B.v1` as TVM prints them, over the same axes."""
    from tilecraft.frontends.te.reducer import TupleReduce

    if isinstance(bodies, TupleReduce):
        return bodies.computes(shape, axes, name, _caller_location())
    if not bodies:
        raise ValueError(f"te.compute {name!r}: the function returned an empty tuple")
    if len(bodies) == 1 and isinstance(bodies[0], TupleReduce):
        return bodies[0].computes(shape, axes, name, _caller_location())
    location = _caller_location()
    outs = [_make_compute(shape, axes, b, f"{name}.v{n}", location) for n, b in enumerate(bodies)]
    for t in outs:
        t.op.siblings = outs
    return outs


def _make_compute(shape, axes, body, name: str, location) -> Tensor:
    body = _default_literal(body)
    if body.dtype == INDEX:  # `lambda i: i`: a tensor of int32, as TVM's index vars
        body = cast(body, "int32")
    reduce_axes = body.axes if isinstance(body, Reduce) else ()
    _check_free_axes(name, body, axes, reduce_axes)
    axis_names: dict[int, str] = {}
    taken: set[str] = set()
    for a in axes + reduce_axes:
        unique, n = a.name, 0
        while unique in taken:
            n += 1
            unique = f"{a.name}_{n}"
        taken.add(unique)
        axis_names[id(a)] = unique
    op = ComputeOp(name, axes, reduce_axes, body, axis_names, location)
    return Tensor(shape, body.dtype, op)


def _lambda_names(fcompute, rank: int) -> list[str]:
    params = list(inspect.signature(fcompute).parameters.values())
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return [f"{params[0].name}{d}" for d in range(rank)]
    # Parameters with defaults are not indices (`lambda i, f=f: ...` binds a value).
    indices = [p for p in params if p.default is p.empty and p.kind is not p.KEYWORD_ONLY]
    if len(indices) != rank:
        raise ValueError(
            f"te.compute of a rank-{rank} shape needs a function of {rank} indices, "
            f"but it takes {len(indices)}"
        )
    positional = indices
    return [p.name for p in positional]


def _check_free_axes(name, body: Expr, axes, reduce_axes):
    allowed = {id(a) for a in axes}
    inner = body.body if isinstance(body, Reduce) else None
    inner_vars = {id(e) for e in _walk(inner)} if inner is not None else set()
    for e in _walk(body):
        if not isinstance(e, IterVar) or id(e) in allowed:
            continue
        if e.kind == "reduce" and builtins.any(e is r for r in reduce_axes) and id(e) in inner_vars:
            continue
        if e.kind == "reduce":
            raise ValueError(
                f"te.compute {name!r} uses reduce axis {e.name!r} outside a reduction "
                f"over it; wrap the body in te.sum/te.max/te.min(..., axis={e.name})"
            )
        raise ValueError(
            f"te.compute {name!r} uses axis {e.name!r}, which belongs to another compute"
        )


def _caller_location() -> FileLineColLoc | None:
    """The user's source line that called into this package (for diagnostics)."""
    frame = sys._getframe(1)
    # Skip every module of this package: schedule.py records steps through this too.
    package_dir = os.path.dirname(__file__)
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == package_dir:
        frame = frame.f_back
    if frame is None:
        return None
    return FileLineColLoc(StringAttr(frame.f_code.co_filename), IntAttr(frame.f_lineno), IntAttr(1))
