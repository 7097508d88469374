"""`te.comm_reducer`: reductions defined by a combiner and an identity, as in TVM.

tilecraft's te dialect reduces with sum, prod, max or min. A user combiner is
recognized by calling it once on two symbolic values: `lambda x, y: x * y` with
identity 1 is prod, and so on. A tuple-valued combiner that picks one pair by
comparing the second elements (TVM's argmax / argmin tutorial) is rewritten into
plain computes (see `TupleReduce`). Any other combiner is refused with a message
that names it.
"""

from __future__ import annotations

from collections.abc import Callable

from tilecraft.frontends.te.expr import (
    Binary,
    Compare,
    Const,
    Expr,
    IfThenElse,
    IterVar,
    Read,
    Reduce,
    Unary,
    Cast,
    _default_literal,
    cast,
)
from tilecraft.frontends.te.ops import _identity, _reduction, if_then_else
from tilecraft.frontends.te.symbolic import Var

_KINDS = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


def _const_value(e) -> float | int | None:
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return e
    if isinstance(e, Const):
        return e.value
    return None


class CommReducer:
    """What `te.comm_reducer(fcombine, fidentity, name=...)` returns: call it like
    `te.sum`, `reducer(expr, axis=k)`, or with a tuple of expressions."""

    def __init__(self, fcombine: Callable, fidentity: Callable, name: str):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name

    def __call__(self, expr, axis, where=None):
        if isinstance(expr, (tuple, list)):
            return self._tuple(tuple(_default_literal(e) for e in expr), axis, where)
        expr = _default_literal(expr)
        x, y = Var("x", expr.dtype), Var("y", expr.dtype)
        combined = self.fcombine(x, y)
        kind = None
        if isinstance(combined, Binary) and {id(combined.lhs), id(combined.rhs)} == {id(x), id(y)}:
            kind = _KINDS.get(combined.op)
        if kind is None:
            raise ValueError(
                f"te.comm_reducer {self.name!r}: tilecraft reduces with x + y, x * y, "
                f"max(x, y) or min(x, y); this combiner gives {combined!r}"
            )
        identity = _const_value(self.fidentity(expr.dtype))
        natural = _identity(kind, expr.dtype).value
        if identity is None or identity != natural:
            raise ValueError(
                f"te.comm_reducer {self.name!r}: the identity of a {kind} reduction is "
                f"{natural}, but fidentity gives {identity!r}"
            )
        return _reduction(kind, expr, axis, where)

    def _tuple(self, exprs: tuple[Expr, ...], axis, where):
        if len(exprs) != 2 or where is not None:
            raise ValueError(
                f"te.comm_reducer {self.name!r}: tilecraft supports tuple reductions of "
                "two values (argmax / argmin) without where="
            )
        x = tuple(Var(f"x{n}", e.dtype) for n, e in enumerate(exprs))
        y = tuple(Var(f"y{n}", e.dtype) for n, e in enumerate(exprs))
        out = self.fcombine(x, y)
        pick = _arg_pick(out, x, y)
        if pick is None:
            raise ValueError(
                f"te.comm_reducer {self.name!r}: tilecraft supports tuple combiners that "
                "keep one pair by comparing the second values (argmax/argmin: "
                "Select(x[1] >= y[1], x[0], y[0]), Select(x[1] >= y[1], x[1], y[1])); "
                f"this combiner gives {out!r}"
            )
        kind, keep_first = pick
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        if len(axes) != 1:
            raise ValueError(f"te.comm_reducer {self.name!r}: a tuple reduction takes one reduce axis")
        _reduction(kind, exprs[1], axes, None)  # checks the axis and the value
        return TupleReduce(kind, keep_first, exprs, axes[0], self.name)


def _arg_pick(out, x, y) -> tuple[str, bool] | None:
    """("max" or "min", whether ties keep the earlier pair) for an argmax/argmin
    combiner, else None."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        return None
    first, second = out
    if not (isinstance(first, IfThenElse) and isinstance(second, IfThenElse)):
        return None
    cond = first.cond
    if second.cond is not cond and repr(second.cond) != repr(cond):
        return None
    if not isinstance(cond, Compare) or cond.op not in ("ge", "gt", "le", "lt"):
        return None
    if {id(cond.lhs), id(cond.rhs)} != {id(x[1]), id(y[1])}:
        return None
    x_first = cond.lhs is x[1]
    # Normalise to "x[1] OP y[1] picks x".
    op = cond.op if x_first else {"ge": "le", "gt": "lt", "le": "ge", "lt": "gt"}[cond.op]
    if (first.then, first.orelse, second.then, second.orelse) != (x[0], y[0], x[1], y[1]):
        return None
    kind = "max" if op in ("ge", "gt") else "min"
    return kind, op in ("ge", "le")


class TupleReduce:
    """An argmax/argmin over one reduce axis, as plain computes:

    - `T.v1[i] = max_k val(i, k)`
    - `T.pos[i] = min_k (k if val(i, k) == T.v1[i] else extent)` (the first k
      reaching it when ties keep the earlier pair, else the last, by max)
    - `T.v0[i] = idx(i, T.pos[i])`, the first expression at that position.

    Only `te.compute` can use it (it returns the two tensors `T.v0`, `T.v1`)."""

    def __init__(self, kind, keep_first, exprs, axis: IterVar, name):
        self.kind, self.keep_first, self.exprs, self.axis, self.name = kind, keep_first, exprs, axis, name

    def __iter__(self):  # unpacking outside te.compute
        raise ValueError(f"te.comm_reducer {self.name!r}: a tuple reduction is the whole body of a te.compute")

    def computes(self, shape, axes, name: str, location):
        from tilecraft.frontends.te.tensor import _make_compute, compute

        k = self.axis
        v1 = _make_compute(shape, axes, Reduce(self.kind, self.exprs[1], (k,), self.exprs[1].dtype), f"{name}.v1", location)
        k2 = IterVar(k.name, k.dom, "reduce")
        val_at = _substitute(self.exprs[1], {id(k): k2})

        def position(*i):
            here = _substitute(val_at, dict(zip((id(a) for a in axes), i)))
            hit = here == v1[i]
            sentinel = k.dom[1] if self.keep_first else k.dom[0] - 1
            chosen = if_then_else(hit, cast(k2, "int32"), sentinel)
            return Reduce("min" if self.keep_first else "max", chosen, (k2,), "int32")

        pos = compute(shape, position, name=f"{name}.pos")

        def pick(*i):
            at = dict(zip((id(a) for a in axes), i))
            at[id(k)] = cast(pos[i], "index")
            return _substitute(self.exprs[0], at)

        v0 = compute(shape, pick, name=f"{name}.v0")
        outs = [v0, v1]
        for t in outs:
            t.op.siblings = outs
        return outs


def _substitute(e: Expr, mapping: dict[int, Expr], read_hook=None) -> Expr:
    """`e` with the IterVars in `mapping` (by id) replaced; `read_hook(read)`, where
    it returns an expression, replaces a whole read."""
    if id(e) in mapping:
        return mapping[id(e)]
    if read_hook is not None and isinstance(e, Read):
        replaced = read_hook(e)
        if replaced is not None:
            return replaced

    def sub(x):
        return _substitute(x, mapping, read_hook)

    if isinstance(e, Binary):
        return Binary(e.op, sub(e.lhs), sub(e.rhs), e.dtype)
    if isinstance(e, Compare):
        return Compare(e.op, sub(e.lhs), sub(e.rhs))
    if isinstance(e, Unary):
        return Unary(e.op, sub(e.operand), e.dtype)
    if isinstance(e, Cast):
        return Cast(sub(e.operand), e.dtype)
    if isinstance(e, IfThenElse):
        return IfThenElse(*(sub(c) for c in e.children()), e.dtype)
    if isinstance(e, Read):
        return Read(e.tensor, tuple(sub(i) for i in e.indices), e.dtype)
    if isinstance(e, Reduce):
        return Reduce(e.kind, sub(e.body), e.axes, e.dtype)
    return e


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> CommReducer:
    """`te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, t))`."""
    return CommReducer(fcombine, fidentity, name)

