"""Symbolic sizes and scalar parameters: `te.var`.

`n = te.var("n")` is an int32 expression that stands for a size unknown when the
computation is written (`te.placeholder((n,))`, `te.compute((n - 2,), ...)`,
`te.reduce_axis((0, n))`); `te.var("bias", "float32")` is a scalar parameter that
the built function takes as an argument.

tilecraft compiles static shapes, so a symbolic size is bound when the function
is called: `tilecraft.build` returns a function that reads the sizes from the
arrays it is given, checks that they agree (two arrays of shape `(n,)` must have
one length), compiles the computation specialized to those sizes (once per
distinct set of sizes, cached) and runs it. `bind_sizes` does the matching and
`evaluate` gives a size expression's value under a binding.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.frontends.te.dtypes import _check_dtype
from tilecraft.frontends.te.expr import Binary, Cast, Const, Expr, Unary, _walk


@dataclass(eq=False, repr=False)
class Var(Expr):
    """A named scalar: a symbolic size (int) or a scalar parameter of a function."""

    name: str
    dtype: str = "int32"

    def __repr__(self) -> str:
        return self.name


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """`te.var("n")`: a symbolic size; `te.var("b", "float32")`: a scalar parameter."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"te.var needs a name, not {name!r}")
    return Var(name, _check_dtype(dtype))


size_var = var


def free_vars(e) -> list[Var]:
    """The Vars an expression (or an int) mentions, each once, in order."""
    if not isinstance(e, Expr):
        return []
    return [x for x in _walk(e) if isinstance(x, Var)]


def is_static(e) -> bool:
    return not free_vars(e)


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# Sizes are positive, so floor and truncated division agree on them; both are
# named, whichever node names the te frontend's `//` and `%` build.
_INT_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "mod": lambda a, b: a % b,
    "truncdiv": _truncdiv,
    "truncmod": lambda a, b: a - _truncdiv(a, b) * b,
    "max": max,
    "min": min,
}


def evaluate(e, bindings: dict[int, int]) -> int:
    """The value of a size expression (an int, or Vars combined by + - * // % max
    min) with each Var's value in `bindings` (keyed by `id(var)`)."""
    if isinstance(e, bool) or not isinstance(e, (int, Expr)):
        raise ValueError(f"a size must be an int or a te.var expression, not {e!r}")
    if isinstance(e, int):
        return e
    if isinstance(e, Const):
        return int(e.value)
    if isinstance(e, Var):
        if id(e) not in bindings:
            raise ValueError(f"the size {e.name} is not known here")
        return bindings[id(e)]
    if isinstance(e, Cast):
        return evaluate(e.operand, bindings)
    if isinstance(e, Unary) and e.op == "neg":
        return -evaluate(e.operand, bindings)
    if isinstance(e, Binary) and e.op in _INT_OPS:
        return int(_INT_OPS[e.op](evaluate(e.lhs, bindings), evaluate(e.rhs, bindings)))
    raise ValueError(f"the size {e!r} is not an integer expression of te.var sizes")


def bind_sizes(
    shapes: list[tuple[str, tuple]], actual: list[tuple[int, ...]]
) -> dict[int, int]:
    """Match declared shapes (of named arguments) with actual array shapes: each Var
    that is a whole dimension takes that dimension's size; every other dimension is
    then checked. Raises ValueError naming the argument and dimension that disagree."""
    bindings: dict[int, int] = {}
    names: dict[int, str] = {}
    for (arg, declared), got in zip(shapes, actual):
        if len(declared) != len(got):
            raise ValueError(
                f"argument {arg} has rank {len(declared)}, got an array of shape {tuple(got)}"
            )
        for dim, (d, g) in enumerate(zip(declared, got)):
            if isinstance(d, Var):
                if id(d) in bindings and bindings[id(d)] != g:
                    raise ValueError(
                        f"size {d.name} is {bindings[id(d)]} (from {names[id(d)]}) but "
                        f"dimension {dim} of {arg} is {g}"
                    )
                bindings[id(d)] = int(g)
                names[id(d)] = f"dimension {dim} of {arg}"
    for (arg, declared), got in zip(shapes, actual):
        for dim, (d, g) in enumerate(zip(declared, got)):
            if isinstance(d, Var):
                continue
            try:
                want = evaluate(d, bindings)
            except ValueError:
                unknown = ", ".join(v.name for v in free_vars(d) if id(v) not in bindings)
                raise ValueError(
                    f"dimension {dim} of {arg} is {d!r}, but no argument has {unknown} "
                    "as a whole dimension to take its size from"
                ) from None
            if want != g:
                said = f"{d!r} = {want}" if free_vars(d) else f"{want}"
                raise ValueError(f"dimension {dim} of {arg} must be {said}, got {g}")
    for v, value in bindings.items():
        if value <= 0:
            raise ValueError(f"size {names[v]} must be positive, got {value}")
    return bindings
