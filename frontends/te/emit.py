"""IR generation: `build_module` turns computes and their schedule into one verified
`func.func` of te, arith/math/scf and sched ops."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from tilecraft.dialects import sched as sched_ir
from tilecraft.dialects import te as te_ir
from tilecraft.frontends.te import narrow
from tilecraft.frontends.te.dtypes import (
    _NARROW_INTS,
    INDEX,
    _ir_type,
    _is_float,
    _is_int,
    _is_narrow_float,
    _is_unsigned,
    _width,
)
from tilecraft.frontends.te.expr import (
    Binary,
    Cast,
    Checked,
    Compare,
    Const,
    Expr,
    IfThenElse,
    IterVar,
    Read,
    Reduce,
    Unary,
)
from tilecraft.frontends.te.schedule import CacheTensor, Schedule, Stage, _reachable
from tilecraft.frontends.te.symbolic import Var, evaluate, free_vars
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor
from tilecraft.dialects.graph.shapes import tensor
from tilecraft.utils.diagnostics import verify_module
from tilecraft.utils.symbolic import SymExpr
from tilecraft.utils.names import name_hint
from tilecraft.utils.gc_pause import compiling


# `sizes` maps each te.var size (by id) to its value, or to its name where the
# IR keeps it symbolic (a `?` of the tensor types, bound when the function runs).
Sizes = Mapping[int, int | str]


def _tensor_type(t: Tensor | CacheTensor, sizes: Sizes | None = None) -> TensorType:
    sizes = sizes or {}
    dims = [_dim(d, sizes) for d in t.shape]
    return tensor(dims, _ir_type(t.dtype))


def _dim(d, sizes: Sizes) -> int | SymExpr:
    if all(isinstance(sizes.get(id(v)), int) for v in free_vars(d)):
        return evaluate(d, sizes)  # type: ignore[arg-type]
    return symbolic_size(d, sizes)


def symbolic_size(e, sizes: Sizes) -> SymExpr:
    """A size expression of te.vars as a SymExpr of their names (+ - * and //, %
    by constants); a ValueError for anything else."""
    if isinstance(e, int):
        return SymExpr.lift(e)
    if isinstance(e, Const):
        return SymExpr.lift(int(e.value))
    if isinstance(e, Var):
        value = sizes.get(id(e))
        if value is None:
            raise ValueError(f"the size {e.name} is not known here")
        return SymExpr.lift(value)
    if isinstance(e, Cast):
        return symbolic_size(e.operand, sizes)
    if isinstance(e, Unary) and e.op == "neg":
        return -symbolic_size(e.operand, sizes)
    if isinstance(e, Binary) and e.op in ("add", "sub", "mul"):
        a, b = symbolic_size(e.lhs, sizes), symbolic_size(e.rhs, sizes)
        return a + b if e.op == "add" else a - b if e.op == "sub" else a * b
    if isinstance(e, Binary) and e.op in ("floordiv", "truncdiv", "floormod", "mod", "truncmod"):
        a, b = symbolic_size(e.lhs, sizes), symbolic_size(e.rhs, sizes)
        if not b.is_constant or b.constant <= 0:
            raise ValueError(f"the size {e!r} divides by a size known only when it runs")
        return a.floordiv(b.constant) if "div" in e.op else a.mod(b.constant)
    raise ValueError(f"the size {e!r} is not a sum of products of te.var sizes")


class _ScheduleEmitter:
    """Replays recorded steps into a sched.schedule block, handles made on first use."""

    def __init__(self, block: Block, values: dict[int, SSAValue]):
        self.block = block
        self.values = values  # id(Tensor) -> its SSA value in the function
        self.stages: dict[int, SSAValue] = {}
        self.axes: dict[tuple[int, int], SSAValue] = {}
        self.location: FileLineColLoc | None = None

    def add(self, op: Operation):
        if self.location is not None:
            op.location = self.location
        self.block.add_op(op)
        return op

    def stage(self, stage: Stage) -> SSAValue:
        handle = self.stages.get(id(stage))
        if handle is None:
            value = self.values.get(id(stage.tensor))
            if value is None:
                raise ValueError(
                    f"the schedule names tensor {stage.tensor.name}, which is not part "
                    "of the function built from these args"
                )
            handle = self.add(sched_ir.StageOp(value)).stage
            handle.name_hint = name_hint(f"s_{stage.tensor.name}")
            self.stages[id(stage)] = handle
        return handle

    def bind_stage(self, stage: Stage, handle: SSAValue):
        handle.name_hint = name_hint(f"s_{stage.tensor.name}")
        self.stages[id(stage)] = handle

    def axis(self, stage: Stage, iv: IterVar) -> SSAValue:
        handle = self.axes.get((id(stage), id(iv)))
        if handle is None:
            name = stage.root_names[id(iv)]
            handle = self.add(sched_ir.AxisOp(self.stage(stage), name)).axis
            handle.name_hint = name_hint(name)
            self.axes[(id(stage), id(iv))] = handle
        return handle

    def bind(self, stage: Stage, iv: IterVar, handle: SSAValue):
        handle.name_hint = name_hint(iv.name)
        self.axes[(id(stage), id(iv))] = handle


class _BodyEmitter:
    """Emits one compute's expression tree as arith/math/scf/te ops."""

    def __init__(
        self,
        tensors: dict[int, SSAValue],
        sizes: Sizes | None = None,
        scalars: dict[int, Tensor] | None = None,
    ):
        self.tensors = tensors
        self.sizes = sizes or {}  # id(te.var) -> its value in this build, or its name
        self.scalars = scalars or {}  # id(te.var) -> the 1-element input that holds it
        self.axes: dict[int, SSAValue] = {}
        self.scopes: list[dict[object, SSAValue]] = [{}]  # one per region; for CSE
        self.block: Block | None = None

    def _add(self, op: Operation) -> SSAValue:
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0]

    def region(self, block: Block, expr: Expr, yield_op=te_ir.YieldOp) -> Region:
        """Fill `block` with `expr` and the op that yields it. Values made here are
        forgotten afterwards: they do not dominate code outside this region."""
        outer = self.block
        self.block = block
        self.scopes.append({})
        block.add_op(yield_op(self.emit(expr)))
        self.scopes.pop()
        self.block = outer
        return Region(block)

    def emit(self, e: Expr) -> SSAValue:
        # Equal constants are shared too; 1, 1.0 and True stay apart.
        key: object = ("const", type(e.value), e.value, e.dtype) if isinstance(e, Const) else id(e)
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        value = self._emit(e)
        self.scopes[-1][key] = value
        return value

    def _emit(self, e: Expr) -> SSAValue:
        if isinstance(e, IterVar):
            return self.axes[id(e)]
        if isinstance(e, Const):
            return self._const(e.value, e.dtype)
        if isinstance(e, Var):
            return self._var(e)
        if isinstance(e, Read):
            idx = [self.emit(i) for i in e.indices]
            return self._add(te_ir.ReadOp(self.tensors[id(e.tensor)], idx))
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Compare):
            return self._compare(e)
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Cast):
            return self._cast(self.emit(e.operand), e.operand.dtype, e.dtype)
        if isinstance(e, IfThenElse):
            return self._if(e)
        if isinstance(e, Reduce):
            return self._reduce(e)
        if isinstance(e, Checked):
            self.block.add_op(te_ir.AssertOp(self.emit(e.cond), e.message))
            return self.emit(e.value)
        raise AssertionError(f"unknown expression node {type(e).__name__}")

    def _var(self, v: Var) -> SSAValue:
        if id(v) in self.scalars:
            zero = self._const(0, INDEX)
            return self._add(te_ir.ReadOp(self.tensors[id(self.scalars[id(v)])], [zero]))
        name = self.sizes.get(id(v))
        if isinstance(name, str):  # known when it runs
            size = self._add(te_ir.SizeOp(name))
            return self._cast(size, INDEX, v.dtype) if v.dtype != INDEX else size
        if id(v) in self.sizes:
            return self._const(self.sizes[id(v)], v.dtype)
        raise ValueError(
            f"te.var {v.name!r} is used in an expression but is neither a size of an "
            "argument's shape nor listed in args"
        )

    def _const(self, value, dtype: str) -> SSAValue:
        t = _ir_type(dtype)
        if _is_float(dtype):
            return self._add(arith.ConstantOp(FloatAttr(float(value), t)))
        return self._add(arith.ConstantOp(IntegerAttr(int(value), t)))

    def _binary(self, e: Binary) -> SSAValue:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        op = _FLOAT_BINARY[e.op] if _is_float(e.dtype) else _INT_BINARY[e.op]
        return self._add(op(a, b))

    def _compare(self, e: Compare) -> SSAValue:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        if _is_float(e.lhs.dtype):
            return self._add(arith.CmpfOp(a, b, _CMPF[e.op]))
        return self._add(arith.CmpiOp(a, b, _CMPI[e.op]))

    def _unary(self, e: Unary) -> SSAValue:
        x = self.emit(e.operand)
        if e.op == "reinterpret":  # same width (expr.reinterpret checked)
            return self._add(arith.BitcastOp(x, _ir_type(e.dtype)))
        if e.op == "neg":
            if _is_float(e.dtype):
                return self._add(arith.NegfOp(x))
            return self._add(arith.SubiOp(self._const(0, e.dtype), x))
        if e.op == "abs":
            return self._add(xmath.AbsFOp(x) if _is_float(e.dtype) else xmath.AbsIOp(x))
        return self._add(_MATH[e.op](x))

    def _cast(self, x: SSAValue, src: str, dst: str) -> SSAValue:
        if _is_narrow_float(src) or _is_narrow_float(dst):
            return narrow.convert(x, src, dst, self._cast, self._add)
        if src in _NARROW_INTS or dst in _NARROW_INTS:
            return self._narrow_int_cast(x, src, dst)
        if _is_unsigned(src) or _is_unsigned(dst):
            return self._unsigned_cast(x, src, dst)
        if src == "bool":  # true -> 1, like numpy (extui/uitofp would do, select is plainer)
            return self._add(arith.SelectOp(x, self._const(1, dst), self._const(0, dst)))
        if dst == "bool":  # nonzero -> true, like numpy (NaN is nonzero)
            zero = self._const(0, src)
            if _is_float(src):
                return self._add(arith.CmpfOp(x, zero, "une"))
            return self._add(arith.CmpiOp(x, zero, "ne"))
        if src == INDEX:
            if _is_int(dst):
                return self._add(arith.IndexCastOp(x, _ir_type(dst)))
            return self._add(arith.SIToFPOp(self._add(arith.IndexCastOp(x, i64)), _ir_type(dst)))
        if dst == INDEX:
            if _is_float(src):
                x, src = self._add(arith.FPToSIOp(x, i64)), "int64"
            return self._add(arith.IndexCastOp(x, IndexType()))
        t = _ir_type(dst)
        if _is_float(src) and _is_float(dst):
            op = arith.ExtFOp if _width(dst) > _width(src) else arith.TruncFOp
        elif _is_int(src) and _is_int(dst):
            op = arith.ExtSIOp if _width(dst) > _width(src) else arith.TruncIOp
        else:
            op = arith.SIToFPOp if _is_float(dst) else arith.FPToSIOp
        return self._add(op(x, t))

    def _narrow_int_cast(self, x: SSAValue, src: str, dst: str) -> SSAValue:
        """Casts from and to int4/int2 through int32: sign-extension from them,
        wrapping into them (floats truncate toward zero first), as ml_dtypes."""
        if src in _NARROW_INTS:
            wide = self._add(arith.ExtSIOp(x, i32))
            return wide if dst == "int32" else self._cast(wide, "int32", dst)
        wide = x if src == "int32" else self._cast(x, src, "int64" if _is_float(src) else "int32")
        return self._add(arith.TruncIOp(wide, _ir_type(dst)))

    def _unsigned_cast(self, x: SSAValue, src: str, dst: str) -> SSAValue:
        """Casts from and to unsigned integers, as numpy's astype: zero-extension
        from them, wrapping (two's complement truncation) into them. No constant of
        an unsigned type is made (arith constants are signless)."""
        if _is_unsigned(src):
            if dst == "bool" or dst == INDEX:  # through int64, where 0 is a plain constant
                return self._cast(self._unsigned_cast(x, src, "int64"), "int64", dst)
            if _is_float(dst):
                return self._add(arith.UIToFPOp(x, _ir_type(dst)))
            if _width(dst) > _width(src):
                return self._add(arith.ExtUIOp(x, _ir_type(dst)))
            if _width(dst) < _width(src):
                return self._add(arith.TruncIOp(x, _ir_type(dst)))
            wide = self._add(arith.ExtUIOp(x, IntegerType(2 * _width(src))))  # same width: a no-op
            return self._add(arith.TruncIOp(wide, _ir_type(dst)))
        if src == "bool":
            return self._add(arith.ExtUIOp(x, _ir_type(dst)))
        if _is_float(src):
            if _width(dst) == 64:
                return self._add(arith.FPToUIOp(x, _ir_type(dst)))
            x, src = self._add(arith.FPToSIOp(x, i64)), "int64"
        if src == INDEX:
            x, src = self._add(arith.IndexCastOp(x, i64)), "int64"
        if _width(dst) < _width(src):
            return self._add(arith.TruncIOp(x, _ir_type(dst)))
        wide = self._add(arith.ExtSIOp(x, IntegerType(2 * _width(dst))))  # sign-extend, then wrap
        return self._add(arith.TruncIOp(wide, _ir_type(dst)))

    def _if(self, e: IfThenElse) -> SSAValue:
        cond = self.emit(e.cond)
        then_region = self.region(Block(), e.then, scf.YieldOp)
        else_region = self.region(Block(), e.orelse, scf.YieldOp)
        return self._add(scf.IfOp(cond, [_ir_type(e.dtype)], then_region, else_region))

    def _reduce(self, e: Reduce) -> SSAValue:
        names = [self.axis_names[id(a)] for a in e.axes]
        block = te_ir.new_block(len(e.axes))
        for a, arg, n in zip(e.axes, block.args, names):
            arg.name_hint = name_hint(n)
            self.axes[id(a)] = arg
        body = self.region(block, e.body)
        bounds = [tuple(_dim(d, self.sizes) for d in a.dom) for a in e.axes]
        for a, (lo, _) in zip(e.axes, bounds):
            if not isinstance(lo, int):
                raise ValueError(
                    f"the reduce axis {self.axis_names[id(a)]} starts at {lo}, known only when it runs; "
                    "a function built for every size needs static starts"
                )
        op = te_ir.ReduceOp(e.kind, names, bounds, _ir_type(e.dtype), body)
        return self._add(op)

    def compute(self, t: Tensor, name: str, op: ComputeOp | None = None) -> te_ir.ComputeOp:
        op = op or t.op
        assert isinstance(op, ComputeOp)
        self.axis_names = op.axis_names
        block = te_ir.new_block(len(op.axis))
        for a, arg in zip(op.axis, block.args):
            arg.name_hint = name_hint(op.axis_names[id(a)])
            self.axes[id(a)] = arg
        body = self.region(block, op.body)
        names = [op.axis_names[id(a)] for a in op.axis]
        compute_op = te_ir.ComputeOp(name, names, _tensor_type(t, self.sizes), body)
        if op.location is not None:
            compute_op.location = op.location
        return compute_op


_FLOAT_BINARY = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
                 "div": arith.DivfOp, "max": arith.MaximumfOp,
                 "min": arith.MinimumfOp, "pow": xmath.PowFOp,
                 # xDSL 0.74's arith has no remf: llvm.frem (C's fmod) goes down as is.
                 "fmod": llvm.FRemOp}  # fmt: skip
_INT_BINARY = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
               "floordiv": arith.FloorDivSIOp, "floormod": te_ir.FloorModOp,
               "truncdiv": arith.DivSIOp, "truncmod": arith.RemSIOp, "max": arith.MaxSIOp,
               "min": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp}  # fmt: skip
# Ordered predicates for floats, except != (unordered, so NaN != x as in numpy).
_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_MATH = {"exp": xmath.ExpOp, "log": xmath.LogOp, "sqrt": xmath.SqrtOp,
         "tanh": xmath.TanhOp, "erf": xmath.ErfOp, "sin": xmath.SinOp, "cos": xmath.CosOp,
         "tan": xmath.TanOp, "asin": xmath.AsinOp, "acos": xmath.AcosOp, "atan": xmath.AtanOp,
         "sinh": xmath.SinhOp, "cosh": xmath.CoshOp, "asinh": xmath.AsinhOp,
         "acosh": xmath.AcoshOp, "atanh": xmath.AtanhOp, "floor": xmath.FloorOp,
         "ceil": xmath.CeilOp, "round": xmath.RoundEvenOp}  # fmt: skip


def _standalone(s: Schedule | None, t: Tensor) -> Tensor:
    """`t`, or, when the schedule computes it at a consumer's loop or inlines it, a
    copy of its compute that the function computes at the root to return it."""
    stage = s._stages.get(id(t)) if s is not None else None
    if stage is None or stage.attach == "root":
        return t
    op = t.op
    copy = ComputeOp(f"{t.name}_out", op.axis, op.reduce_axis, op.body, op.axis_names, op.location)
    return Tensor(t.shape, t.dtype, copy)


def _unique_names(tensors: Sequence[Tensor]) -> dict[int, str]:
    """Tensor names made unique in one function (`compute`, `compute_1`, ...)."""
    taken: set[str] = set()
    names: dict[int, str] = {}
    for t in tensors:
        name, n = t.name, 0
        while name in taken:
            n += 1
            name = f"{t.name}_{n}"
        taken.add(name)
        names[id(t)] = name
    return names


def symbolic_sizes(size_vars: Sequence[Var]) -> Sizes:
    """Each te.var size by its name (`build_module` keeps them symbolic); a
    ValueError when two have one name, or a name is not an identifier."""
    names: dict[int, int | str] = {}
    seen: dict[str, Var] = {}
    for v in size_vars:
        if v.name in seen:
            raise ValueError(f"two te.var sizes are named {v.name!r}")
        SymExpr.lift(v.name)  # (a SymbolicSizeError, a ValueError, for a bad name)
        seen[v.name] = v
        names[id(v)] = v.name
    return names


def scalar_input(v: Var) -> Tensor:
    """The 1-element input that carries scalar parameter `v` (a `te.var` in args that
    is not a size) into the function; one per Var."""
    t = getattr(v, "_input", None)
    if t is None:
        t = Tensor((1,), v.dtype, PlaceholderOp(v.name))
        v._input = t  # type: ignore[attr-defined]
    return t


def shape_vars(args: Sequence) -> list[Var]:
    """The te.var sizes in the shapes of `args` and of every tensor they read."""
    tensors = [t for t in args if isinstance(t, Tensor)]
    found: dict[int, Var] = {}
    for t in _reachable([t for t in tensors if isinstance(t.op, ComputeOp)]) + tensors:
        for d in t.shape:
            for v in free_vars(d):
                found.setdefault(id(v), v)
        if isinstance(t.op, ComputeOp):
            for a in t.op.reduce_axis:
                for d in a.dom:
                    for v in free_vars(d):
                        found.setdefault(id(v), v)
    return list(found.values())


@compiling
def build_module(
    s: Schedule | None,
    args: Sequence[Tensor | Var],
    name: str = "main",
    sizes: Sizes | None = None,
    only_own_stages: bool = False,
    verify: bool = True,
) -> ModuleOp:
    """The te + sched IR of `args`' computes, scheduled by `s`, as one function.

    The function takes the placeholders in `args` (in order) and returns the computed
    tensors in `args` (in order); it holds every compute they need, producers first,
    and the schedule at the end. The module is verified before it is returned
    (unless `verify=False`: the tuner's candidates, built from its own templates).

    `sizes` gives each `te.var` size its value (by `id`), or its name to keep it
    symbolic: a `?` of the tensor types that the loop function reads from its
    arguments (`symbolic_sizes`); a `te.var` in `args` that is not a size is a
    scalar parameter, taken as a 1-element input (`scalar_input`).
    A computed tensor in `args` that the schedule computes at a consumer's loop or
    inlines is also computed on its own for the function to return it.
    """
    sizes = dict(sizes or {})
    scalars: dict[int, Tensor] = {}
    tensor_args = []
    for t in args:
        if isinstance(t, Var):
            if id(t) in sizes:
                continue  # a size the caller checks; nothing to pass
            scalars[id(t)] = scalar_input(t)
            t = scalars[id(t)]
        tensor_args.append(t)
    unbound = [v.name for v in shape_vars(tensor_args) if id(v) not in sizes]
    if unbound:
        raise ValueError(
            f"the sizes {', '.join(unbound)} (te.var) need values to build IR; "
            "tilecraft.build binds them from the arrays at each call"
        )
    args = tensor_args
    for t in args:
        if isinstance(t, CacheTensor):
            raise ValueError(f"{t.name} is a cache stage, not a tensor the function can take")
        if not isinstance(t, Tensor):
            raise ValueError(f"args must be te tensors, not {t!r}")
    if len({id(t) for t in args}) != len(args):
        raise ValueError("a tensor appears twice in args")
    # A te.extern's tensor is an input here: it is computed before this function runs.
    inputs = [t for t in args if not isinstance(t.op, ComputeOp)]
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    if not outputs:
        raise ValueError("args must include at least one computed tensor (an output)")
    ops = s._ops if s is not None else {}  # computes a schedule redefined (rfactor)
    order = _reachable(outputs, through_externs=False, ops=ops)
    input_ids = {id(t) for t in inputs}
    for t in order:
        if not isinstance(t.op, ComputeOp) and id(t) not in input_ids:
            raise ValueError(
                f"placeholder {t.name} is read by the computation but not listed in args"
            )
    computes = [t for t in order if isinstance(t.op, ComputeOp)]
    outputs = [_standalone(s, t) for t in outputs]
    computes += [t for t in outputs if id(t) not in {id(c) for c in computes}]
    names = _unique_names(inputs + computes)

    arg_attrs = ArrayAttr([DictionaryAttr({"tc.name": StringAttr(names[id(t)])}) for t in inputs])
    function = func.FuncOp(
        name,
        ([_tensor_type(t, sizes) for t in inputs], [_tensor_type(t, sizes) for t in outputs]),
        arg_attrs=arg_attrs,
    )
    body = function.body.block
    values: dict[int, SSAValue] = {}
    for t, arg in zip(inputs, body.args):
        arg.name_hint = name_hint(names[id(t)])
        values[id(t)] = arg
    for t in computes:
        op = _BodyEmitter(values, sizes, scalars).compute(t, names[id(t)], ops.get(id(t)))
        body.add_op(op)
        op.result.name_hint = name_hint(names[id(t)])
        values[id(t)] = op.result

    if s is not None and s._steps:
        sched_block = Block()
        emitter = _ScheduleEmitter(sched_block, values)
        for step, location, stage in s._steps:
            if only_own_stages and id(stage.tensor) not in values and not isinstance(stage.tensor, CacheTensor):
                continue  # a stage of another part of a computation split at te.extern
            emitter.location = location
            step(emitter)
        body.add_op(sched_ir.ScheduleOp(Region(sched_block)))
    body.add_op(func.ReturnOp(*[values[id(t)] for t in outputs]))
    module = ModuleOp([function])
    if verify:
        verify_module(module)
    return module
