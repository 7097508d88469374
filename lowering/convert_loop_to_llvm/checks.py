"""What `convert-loop-to-llvm` can convert, checked before any rewriting: an
unsupported op is rejected at the op, so no pattern fails half way."""

from __future__ import annotations


from tilecraft.analysis.parallel_work import MAX_THREADS_ATTR
from tilecraft.backends.llvm.builder import scalar_type
from tilecraft.backends.llvm.ops import HANDLERS
from tilecraft.dialects.loop import (
    GPU_LOOP_KINDS,
    AllocOp,
    AssertOp,
    ForOp,
    GatherOp,
    GuardOp,
    LaunchOp,
    LoopKind,
    ScatterOp,
    ViewOp,
    YieldOp,
)
from tilecraft.lowering.convert_loop_to_llvm.state import PASS
from tilecraft.utils import symbolic
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.symbolic import SymbolicSizeError
from tilecraft.utils.levels import require_loop_level
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Operation


# What can be converted (checked before any rewriting) -------------------------

SUPPORTED = (
    ForOp, GuardOp, AllocOp, ViewOp, LaunchOp, YieldOp, AssertOp, scf.IfOp, scf.ForOp, scf.YieldOp,
    memref.DimOp,
    func.CallOp, func.ReturnOp, memref.LoadOp, memref.StoreOp, arith.ConstantOp,
    vector.LoadOp, vector.StoreOp, vector.MaskedLoadOp, vector.MaskedStoreOp,
    vector.BroadcastOp, GatherOp, ScatterOp,
)  # fmt: skip


def check_convertible(module: ModuleOp, also_supported: tuple[type[Operation], ...] = ()) -> None:
    """Raise an `OpError` at the first op the patterns cannot convert;
    `also_supported`: op types that patterns added to the walk convert (the GPU
    index ops of convert-gpu-to-nvvm)."""
    require_loop_level(module, PASS)  # graph or te IR: say what lowers it
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise OpError(
                op,
                f"{PASS}: expected only func.func at module level, found '{op.name}'; "
                "lower it to loops first.",
            )
        _check_function(op)
        for inner in op.walk():
            if inner is not op and not isinstance(inner, also_supported):
                _check_op(inner)


def _check_function(op: func.FuncOp) -> None:
    name = op.sym_name.data
    if not op.body.blocks:
        raise OpError(
            op, f"{PASS}: function declarations are not supported; give '{name}' a body."
        )
    if op.function_type.outputs.data:
        raise OpError(
            op, f"{PASS}: functions return nothing; write results to output memref arguments."
        )
    for i, t in enumerate(op.function_type.inputs.data):
        if isinstance(t, MemRefType):
            ok = True
        else:  # outlined bodies also take scalars
            ok = op.sym_visibility is not None and _is_scalar(t)
        if not ok:
            raise OpError(
                op,
                f"{PASS}: argument #{i + 1} of '{name}' has type {t}; "
                "only memrefs are supported.",
            )
        if isinstance(t, MemRefType) and op.arg_attrs is not None:
            _check_dim_names(op, i, t)
        if isinstance(t, MemRefType) and _byte_size(t) >= 1 << 63:
            raise OpError(
                op,
                f"{PASS}: argument #{i + 1} of '{name}' ({t}) is {_byte_size(t)} bytes, "
                "more than 64-bit addresses reach.",
            )


def _check_dim_names(op: func.FuncOp, i: int, t: MemRefType) -> None:
    """`tc.dims` on a memref argument names its `?` sizes, one expression each
    (equal names: equal sizes, checked by the caller; `utils/symbolic.py`)."""
    names = op.arg_attrs.data[i].data.get("tc.dims")  # type: ignore[union-attr]
    if names is None:
        return
    where = f"{PASS}: tc.dims of argument #{i + 1} of '{op.sym_name.data}'"
    dynamic = sum(d < 0 for d in t.get_shape())
    if not isinstance(names, ArrayAttr) or not all(isinstance(n, StringAttr) for n in names):
        raise OpError(op, f"{where} must be an array of strings, not {names}.")
    if len(names) != dynamic:
        raise OpError(op, f"{where} names {len(names)} sizes; {t} has {dynamic} '?' dimensions.")
    for n in names:
        try:
            symbolic.parse(n.data)  # type: ignore[union-attr]
        except SymbolicSizeError as e:
            raise OpError(op, f"{where}: {e}") from None


def _byte_size(t: MemRefType) -> int:
    """At most how many bytes (the `?` sizes count as 1: bounded when called)."""
    size = max(1, getattr(t.get_element_type(), "bitwidth", 8) // 8)
    for d in t.get_shape():
        size *= max(d, 1)
    return size


def _constant_ok(value: Attribute) -> bool:
    if isinstance(value, DenseIntOrFPElementsAttr):
        return isinstance(value.type, VectorType) and len(value.get_shape()) == 1
    return isinstance(value, IntegerAttr | FloatAttr)


def _is_scalar(t: Attribute) -> bool:
    return isinstance(t, IndexType) or scalar_type(t) is t and hasattr(t, "bitwidth")


# Op types with nothing to check but their type, found supported once: a kernel
# has tens of thousands of ops, and the checks below cost microseconds each.
_SUPPORTED_TYPES: set[type] = set()
_CHECKED_ONE_BY_ONE = (LaunchOp, ForOp, func.CallOp, arith.ConstantOp, scf.ForOp, memref.DimOp)


def _check_op(op: Operation) -> None:
    if type(op) in _SUPPORTED_TYPES:
        return
    if isinstance(op, LaunchOp) and MAX_THREADS_ATTR in op.attributes:
        cap = op.attributes[MAX_THREADS_ATTR]
        if not isinstance(cap, IntegerAttr) or cap.value.data < 1:
            raise OpError(
                op, f"{PASS}: {MAX_THREADS_ATTR} must be a positive integer (the most threads "
                f"the launch may use), not {cap}.",
            )
    if isinstance(op, ForOp) and op.kind.data == LoopKind.PARALLEL and op.is_static and op.extent > 1:
        raise OpError(
            op, f"{PASS}: a parallel loop is left; run loop-outline-parallel first."
        )
    if isinstance(op, ForOp) and op.kind.data == LoopKind.VECTORIZED and op.is_static and op.extent > 1:
        raise OpError(op, f"{PASS}: a vectorized loop is left; run loop-vectorize first.")
    if isinstance(op, ForOp) and op.kind.data.value in GPU_LOOP_KINDS:
        raise OpError(
            op, f"{PASS}: a loop bound to {op.kind.data.value} runs on a GPU: build for target "
            "'cuda' (convert-loop-to-gpu outlines it into a kernel), or do not bind it.",
        )
    if isinstance(op, func.CallOp) and (
        op.results or not all(isinstance(a.type, MemRefType) for a in op.arguments)
    ):
        raise OpError(
            op, f"{PASS}: a call passes memrefs and returns nothing (the loop calling convention)."
        )
    if isinstance(op, arith.ConstantOp) and not _constant_ok(op.value):
        raise OpError(
            op, f"{PASS}: only scalar and 1-D vector constants are supported, not {op.value}."
        )
    if isinstance(op, scf.ForOp) and (
        op.iter_args
        or not isinstance(step := op.step.owner, arith.ConstantOp)
        or step.value != IntegerAttr(1, IndexType())
    ):
        raise OpError(
            op, f"{PASS}: only scf.for with step 1 and no loop-carried values is supported."
        )
    if isinstance(op, memref.DimOp) and (
        not isinstance(c := op.index.owner, arith.ConstantOp)
        or not isinstance(c.value, IntegerAttr)
        or not 0 <= c.value.value.data < len(op.source.type.get_shape())  # type: ignore[union-attr]
        or not isinstance(op.source.type, MemRefType)
    ):
        raise OpError(op, f"{PASS}: memref.dim takes a constant dimension of the memref's rank.")
    if op.dialect_name() in ("llvm", "llvmx"):
        return
    if not isinstance(op, SUPPORTED) and type(op) not in HANDLERS:
        raise OpError(
            op,
            f"{PASS}: '{op.name}' is not supported; "
            "lower it to loop, memref, scf.if, arith or math ops first.",
        )
    if not isinstance(op, _CHECKED_ONE_BY_ONE):
        _SUPPORTED_TYPES.add(type(op))
