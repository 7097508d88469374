"""A numpy evaluator of te functions: the oracle the compiled code is checked against.

It must be obviously right, so it is deliberately plain. It computes what a te
function says, never how a schedule says to run it (`sched.schedule` is skipped: a
schedule does not change the result).

How: every value is a numpy array of the IR type's dtype, broadcastable to the
index grid of the compute being evaluated. A compute of shape (M, N) evaluates its
body once, with index arguments `arange(M)` shaped (M, 1) and `arange(N)` shaped
(1, N), so each op runs once over all elements (never a Python loop per element):

- `te.read` is numpy fancy indexing with the broadcast index arrays;
- `te.reduce` puts its axes in front as extra grid dimensions (k shaped (K, 1, 1)),
  so numpy's broadcasting lines them up with the compute's indices, evaluates its
  body and reduces those leading dimensions; over a large domain it does so a
  chunk of the first reduce axis at a time, so a 1024^3 matmul never holds 4 GiB;
- `scf.if` evaluates both branches, each under a mask of the lanes that take it,
  and selects with `np.where`; a read in a branch clips the indices of lanes that
  do not take it (padding reads out of bounds there) and rejects the others;
- `te.assert` raises `EvaluationError` with its message where its condition is
  false for some element (the compiled function's run-time error);
- arith and math ops map to numpy functions, each result cast back to the IR type,
  so float32 stays float32, integers wrap, `floordivsi`/`te.floormod` round down and
  `divsi`/`remsi` toward zero; an integer division or remainder by zero is 0 and
  MIN / -1 wraps, as numpy gives them (and the compiled code does).

An op it does not know raises `EvaluationError` naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    VectorType,
)
from xdsl.ir import Block, Operation, SSAValue

from tilecraft.dialects import sched as sched_ir
from tilecraft.dialects import te as te_ir
from tilecraft.utils.diagnostics import EvaluationError
from tilecraft.utils.dtypes import numpy_dtype

# Elements one chunk of a reduction may span (its broadcast grid); 8 Mi floats = 32 MiB.
CHUNK_ELEMENTS = 1 << 23


def evaluate(func_op: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The results of a te function for these inputs (one array per result)."""
    args = func_op.body.block.args
    if len(inputs) != len(args):
        raise ValueError(f"@{func_op.sym_name.data} takes {len(args)} inputs, got {len(inputs)}")
    env: dict[SSAValue, np.ndarray] = {}
    for n, (arg, x) in enumerate(zip(args, inputs)):
        x = np.asarray(x)
        t = arg.type
        assert isinstance(t, TensorType)
        shape, dtype = tuple(t.get_shape()), numpy_dtype(t.get_element_type())
        if x.shape != shape or x.dtype != dtype:
            raise ValueError(
                f"input {n} of @{func_op.sym_name.data} must be a {shape} {dtype} array, "
                f"not {x.shape} {x.dtype}"
            )
        env[arg] = x
    with np.errstate(all="ignore"):  # IEEE inf/NaN and integer wrap-around are intended
        results = _Evaluator(env).run(func_op.body.block)
    return [np.array(r, copy=True) for r in results]


def evaluate_module(module: ModuleOp, name: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`evaluate` on the function `@name` of a module."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return evaluate(op, inputs)
    raise ValueError(f"the module has no function @{name}")


class _Evaluator:
    def __init__(self, env: dict[SSAValue, np.ndarray]):
        self.env = env
        self.mask: np.ndarray | None = None  # lanes live under the enclosing scf.ifs

    def run(self, block: Block) -> list[np.ndarray]:
        """Evaluate a block; returns the values its terminator yields or returns."""
        for op in block.ops:
            if isinstance(op, (te_ir.YieldOp, scf.YieldOp, func.ReturnOp)):
                return [self.env[v] for v in op.operands]
            if isinstance(op, sched_ir.ScheduleOp):
                continue
            results = self.op(op)
            for res, value in zip(op.results, results, strict=True):
                self.env[res] = np.asarray(value).astype(numpy_dtype(res.type), copy=False)
        raise EvaluationError(block.parent_op(), "reference evaluator: block has no terminator")

    def op(self, op: Operation) -> list[np.ndarray]:
        if isinstance(op, te_ir.ComputeOp):
            return [self.compute(op)]
        if isinstance(op, te_ir.ReduceOp):
            return [self.reduce(op)]
        if isinstance(op, te_ir.ReadOp):
            return [self.read(op)]
        if isinstance(op, scf.IfOp):
            return self.if_(op)
        if isinstance(op, te_ir.AssertOp):
            self.check(op)
            return []
        if op.name == "arith.constant":
            return [_constant(op)]
        fn = _ELEMENTWISE.get(op.name)
        if fn is None:
            raise EvaluationError(op, f"the reference evaluator does not know '{op.name}'")
        return [fn(op, *(self.env[v] for v in op.operands))]

    def compute(self, op: te_ir.ComputeOp) -> np.ndarray:
        shape = op.shape
        rank = len(shape)
        for d, arg in enumerate(op.body.block.args):
            self.env[arg] = _grid(np.arange(shape[d]), d, rank)
        value = self.run(op.body.block)[0]
        return np.broadcast_to(value, shape).astype(numpy_dtype(op.result.type))

    def reduce(self, op: te_ir.ReduceOp) -> np.ndarray:
        """Evaluate the body on a grid of (reduce axes..., spatial axes...), reduce the
        leading dimensions."""
        combine, reducer = _REDUCERS[op.kind.data]
        bounds = op.bounds
        spatial = _spatial_shape(op)
        n = len(bounds)
        rank = n + len(spatial)
        args = op.body.block.args
        for d, (arg, (lo, hi)) in enumerate(zip(args, bounds)):
            self.env[arg] = _grid(np.arange(lo, hi), d, rank)
        per_step = math.prod(spatial) * math.prod(hi - lo for lo, hi in bounds[1:])
        chunk = max(1, CHUNK_ELEMENTS // per_step)
        lo0, hi0 = bounds[0]
        result = None
        for start in range(lo0, hi0, chunk):
            values = np.arange(start, min(start + chunk, hi0))
            self.env[args[0]] = _grid(values, 0, rank)
            term = _with_rank(self.run(op.body.block)[0], rank)
            # A term independent of a reduce axis still counts once per iteration.
            extents = (len(values),) + tuple(hi - lo for lo, hi in bounds[1:])
            term = np.broadcast_to(term, extents + term.shape[n:])
            part = reducer(term, axis=tuple(range(n)), dtype=term.dtype)
            result = part if result is None else combine(result, part)
        return result

    def read(self, op: te_ir.ReadOp) -> np.ndarray:
        tensor = self.env[op.tensor]
        indices = [self.env[v] for v in op.indices]
        for d, (index, extent) in enumerate(zip(indices, tensor.shape)):
            bad = (index < 0) | (index >= extent)
            if self.mask is not None:
                bad = bad & self.mask
            if np.any(bad):
                value = int(np.broadcast_to(index, bad.shape)[bad].flat[0])
                raise EvaluationError(
                    op,
                    f"reference evaluator: te.read index {value} is out of bounds "
                    f"[0, {extent}) in dimension {d} of {op.tensor.type}",
                )
        if self.mask is not None:  # lanes not taken may hold any index; keep them in range
            indices = [np.clip(i, 0, n - 1) for i, n in zip(indices, tensor.shape)]
        return tensor[tuple(indices)]

    def check(self, op: te_ir.AssertOp) -> None:
        """te.assert: the call fails, as the compiled one does, where it is false."""
        failed = ~np.asarray(self.env[op.cond], bool)
        if self.mask is not None:
            failed = failed & self.mask
        if np.any(failed):
            raise EvaluationError(op, op.message.data)

    def if_(self, op: scf.IfOp) -> list[np.ndarray]:
        cond = self.env[op.cond]
        if np.all(cond):
            return self.run(op.true_region.block)
        if not np.any(cond):
            return self.run(op.false_region.block)
        outer = self.mask
        self.mask = cond if outer is None else outer & cond
        taken = self.run(op.true_region.block)
        self.mask = ~cond if outer is None else outer & ~cond
        not_taken = self.run(op.false_region.block)
        self.mask = outer
        return [np.where(cond, t, f) for t, f in zip(taken, not_taken)]


def _grid(values: np.ndarray, dim: int, rank: int) -> np.ndarray:
    """Index values laid along grid dimension `dim` of a rank-`rank` grid."""
    shape = [1] * rank
    shape[dim] = len(values)
    return values.astype(np.int64).reshape(shape)


def _with_rank(x: np.ndarray, rank: int) -> np.ndarray:
    x = np.asarray(x)
    return x.reshape((1,) * (rank - x.ndim) + x.shape)


def _spatial_shape(op: te_ir.ReduceOp) -> tuple[int, ...]:
    compute = op.parent_op()
    assert isinstance(compute, te_ir.ComputeOp)
    return compute.shape


_REDUCERS: dict[str, tuple[Callable, Callable]] = {
    "sum": (np.add, np.sum),
    "prod": (np.multiply, np.prod),
    "max": (np.maximum, lambda x, axis, dtype: np.max(x, axis=axis)),
    "min": (np.minimum, lambda x, axis, dtype: np.min(x, axis=axis)),
}


def _constant(op: Operation) -> np.ndarray:
    attr = op.properties["value"]
    dtype = numpy_dtype(op.results[0].type)
    if isinstance(attr, FloatAttr):
        return np.array(attr.value.data, dtype=dtype)
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        if dtype == np.bool_:
            return np.array(value != 0)
        return np.array(value).astype(dtype)  # wraps, as the bits do
    raise EvaluationError(op, f"reference evaluator: unsupported constant {attr}")


# --- scalar ops ----------------------------------------------------------------------


def _unsigned(x: np.ndarray) -> np.ndarray:
    return x.astype(f"uint{x.dtype.itemsize * 8}") if x.dtype != np.bool_ else x


def _divsi(a, b):
    """Integer division rounding toward zero (C, LLVM sdiv); by zero it is 0."""
    return (a - np.fmod(a, b)) // b


_CMPI: dict[int, Callable] = {
    0: np.equal, 1: np.not_equal,
    2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal,
    6: lambda a, b: _unsigned(a) < _unsigned(b),
    7: lambda a, b: _unsigned(a) <= _unsigned(b),
    8: lambda a, b: _unsigned(a) > _unsigned(b),
    9: lambda a, b: _unsigned(a) >= _unsigned(b),
}  # fmt: skip


def _cmpf(predicate: int, a, b):
    """arith.cmpf: `o` predicates are false if either side is NaN, `u` ones true."""
    unordered = np.isnan(a) | np.isnan(b)
    base = [None, np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal]
    if predicate == 0:
        return np.zeros(np.broadcast(a, b).shape, bool)
    if predicate == 15:
        return np.ones(np.broadcast(a, b).shape, bool)
    if predicate == 7:
        return ~unordered
    if predicate == 14:
        return unordered
    if predicate < 7:
        return ~unordered & base[predicate](a, b)
    return unordered | base[predicate - 7](a, b)


def _erf(x):
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _sitofp(op, x):
    if x.dtype == np.bool_:  # i1 is signed: true is -1
        x = -x.astype(np.int64)
    return x


def _extsi(op, x):
    return -x.astype(np.int64) if x.dtype == np.bool_ else x


def _trunci(op, x):
    if numpy_dtype(op.results[0].type) == np.bool_:
        return (x & 1).astype(bool)
    return x


def _binary(fn):
    return lambda op, a, b: fn(a, b)


def _unary(fn):
    return lambda op, x: fn(x)


def _same(op, x):  # a cast whose work is done by the cast to the result dtype
    return x


def _bitcast(op, x):  # the same bits as the result's dtype (bf16 <-> i16...)
    t = op.results[0].type
    return np.asarray(x).view(numpy_dtype(t.element_type if isinstance(t, VectorType) else t))


# Each entry takes the op and its operand arrays; `run` casts the result to the op's
# result dtype, which completes casts and wraps integer overflow.
_ELEMENTWISE: dict[str, Callable] = {
    "arith.addi": _binary(np.add),
    "arith.subi": _binary(np.subtract),
    "arith.muli": _binary(np.multiply),
    "arith.divsi": _binary(_divsi),
    "arith.floordivsi": _binary(np.floor_divide),
    "arith.ceildivsi": _binary(lambda a, b: -np.floor_divide(-a, b)),
    "arith.remsi": _binary(np.fmod),
    "te.floormod": _binary(np.mod),
    "arith.maxsi": _binary(np.maximum),
    "arith.minsi": _binary(np.minimum),
    "arith.andi": _binary(np.bitwise_and),
    "arith.ori": _binary(np.bitwise_or),
    "arith.xori": _binary(np.bitwise_xor),
    "arith.shli": _binary(np.left_shift),
    "arith.shrsi": _binary(np.right_shift),
    "arith.shrui": lambda op, a, b: _unsigned(a) >> b,
    "arith.bitcast": _bitcast,
    "arith.addf": _binary(np.add),
    "arith.subf": _binary(np.subtract),
    "arith.mulf": _binary(np.multiply),
    "arith.divf": _binary(np.divide),
    "arith.negf": _unary(np.negative),
    "arith.maximumf": _binary(np.maximum),
    "arith.minimumf": _binary(np.minimum),
    "arith.maxnumf": _binary(np.fmax),
    "arith.minnumf": _binary(np.fmin),
    "arith.cmpi": lambda op, a, b: _CMPI[op.predicate.value.data](a, b),
    "arith.cmpf": lambda op, a, b: _cmpf(op.predicate.value.data, a, b),
    "arith.select": lambda op, c, a, b: np.where(c, a, b),
    "arith.index_cast": _same,
    "arith.sitofp": _sitofp,
    "arith.uitofp": lambda op, x: _unsigned(x),
    "arith.fptosi": _same,
    "arith.extf": _same,
    "arith.truncf": _same,
    "arith.extsi": _extsi,
    "arith.extui": lambda op, x: _unsigned(x),
    "arith.trunci": _trunci,
    "math.exp": _unary(np.exp),
    "math.exp2": _unary(np.exp2),
    "math.expm1": _unary(np.expm1),
    "math.log": _unary(np.log),
    "math.log2": _unary(np.log2),
    "math.log10": _unary(np.log10),
    "math.log1p": _unary(np.log1p),
    "math.sqrt": _unary(np.sqrt),
    "math.rsqrt": _unary(lambda x: 1 / np.sqrt(x)),
    "math.tanh": _unary(np.tanh),
    "math.sin": _unary(np.sin),
    "math.cos": _unary(np.cos),
    "math.tan": _unary(np.tan),
    "math.asin": _unary(np.arcsin),
    "math.acos": _unary(np.arccos),
    "math.atan": _unary(np.arctan),
    "math.sinh": _unary(np.sinh),
    "math.cosh": _unary(np.cosh),
    "math.asinh": _unary(np.arcsinh),
    "math.acosh": _unary(np.arccosh),
    "math.atanh": _unary(np.arctanh),
    "llvm.frem": _binary(np.fmod),
    "math.erf": _unary(_erf),
    "math.absf": _unary(np.abs),
    "math.absi": _unary(np.abs),
    "math.floor": _unary(np.floor),
    "math.ceil": _unary(np.ceil),
    "math.trunc": _unary(np.trunc),
    "math.round": _unary(_round_half_away),
    "math.roundeven": _unary(np.rint),
    "math.powf": _binary(np.power),
    "math.fma": lambda op, a, b, c: a * b + c,
}
