"""Tensor intrinsics: what `sched.tensorize` and `loop.tensor_intrin` name.

A tensor intrinsic is declared once (`te.decl_tensor_intrin`, or the built-ins
below, written as te IR) and registered here by name, so schedules and
loop IR that name it replay from text. Each holds

- its *compute*, as te IR: a `func.func` taking the intrinsic's input tensors and
  returning the one tensor its single `te.compute` defines (e.g. a 4x16 tile of
  `C[i, j] = sum(A[i, k] * B[k, j])` over 8 values of k). `sched.tensorize`
  checks a stage's loop nest against it (`analysis.tensorize`);
- its *lowerings*, one per target, keyed by the target's name. A lowering is
  an object the target's pass understands; for "llvm" it is a `LoopKernel`
  (`transforms/lower_tensor_intrin.py` writes the intrinsic's own loop nest in
  place of the `loop.tensor_intrin` op, with the loop kinds the kernel chooses,
  so `loop-unroll` and `loop-vectorize` make the micro-kernel). An accelerator
  target adds its own key (e.g. "accel") with the micro-ops it emits;
- the memory scope each operand must live in, where the declaration binds one.

Semantics, as `loop.tensor_intrin` states them: for a reduction, the output
region is *updated* (`C[region] op= reduce(...)`): the loop nest around the op
initializes it (the stage emitter puts the reduction's init nest in front of the
op when no reduce loop encloses it). Without a reduction the region is assigned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tilecraft.dialects import te
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute


@dataclass(frozen=True)
class LoopKernel:
    """The "llvm" lowering of an intrinsic: its compute as a loop nest.

    `order` lists the intrinsic's axis names outermost first (default: the spatial
    axes but the last, the reduce axes, then the last spatial axis); `kinds` maps
    axis names to a loop kind (default: the innermost spatial axis "vectorized",
    every other axis "unrolled", so the whole tile becomes straight-line vector
    code: a register-tile micro-kernel)."""

    order: tuple[str, ...] | None = None
    kinds: Mapping[str, str] = field(default_factory=dict)

    def loop_order(self, intrin: TensorIntrin) -> list[str]:
        spatial, reduce = intrin.spatial_names, intrin.reduce_names
        default = spatial[:-1] + reduce + spatial[-1:]
        return list(self.order) if self.order is not None else default

    def kind(self, intrin: TensorIntrin, axis: str) -> str:
        if axis in self.kinds:
            return self.kinds[axis]
        return "vectorized" if intrin.spatial_names[-1:] == [axis] else "unrolled"


@dataclass(frozen=True)
class Operand:
    """One tensor of an intrinsic (TVM's buffer of `binds`): name, shape, element
    type and the memory scope it must live in (None: any)."""

    name: str
    shape: tuple[int, ...]
    element_type: Attribute
    scope: str | None = None


@dataclass(eq=False)
class TensorIntrin:
    """A registered tensor intrinsic (see the module docstring)."""

    name: str
    function: func.FuncOp
    inputs: list[Operand]
    output: Operand
    lowerings: dict[str, object]

    @property
    def compute(self) -> te.ComputeOp:
        (compute,) = te.compute_ops(self.function)
        return compute

    @property
    def spatial_names(self) -> list[str]:
        return self.compute.names

    @property
    def reduce_names(self) -> list[str]:
        reduce = self.compute.reduce
        return reduce.names if reduce is not None else []

    def extents(self) -> dict[str, int]:
        out = dict(zip(self.spatial_names, self.output.shape))
        reduce = self.compute.reduce
        if reduce is not None:
            out.update({n: hi - lo for n, (lo, hi) in zip(reduce.names, reduce.bounds)})
        return out

    def lowering(self, target: str) -> object | None:
        return self.lowerings.get(target)

    def describe(self) -> str:
        ext = self.extents()
        axes = ", ".join(f"{n}<{ext[n]}" for n in self.spatial_names + self.reduce_names)
        return f"{self.name} ({axes})"


_REGISTRY: dict[str, TensorIntrin] = {}
_builtins_loaded = False


def intrin_from_function(
    name: str,
    function: func.FuncOp,
    lowerings: Mapping[str, object],
    scopes: Mapping[str, str] | None = None,
) -> TensorIntrin:
    """A `TensorIntrin` from its te function (checked: one te.compute, reading
    only the function's arguments, reduce axes starting at 0, no nested regions)."""
    scopes = dict(scopes or {})
    computes = te.compute_ops(function)
    if len(computes) != 1:
        raise ValueError(f"tensor intrinsic {name}: its compute must be one te.compute, not {len(computes)}")
    (compute,) = computes
    reduce = compute.reduce
    if reduce is not None and any(lo != 0 for lo, _ in reduce.bounds):
        raise ValueError(f"tensor intrinsic {name}: its reduce axes must start at 0")
    for op in compute.body.walk():
        if op is not compute and op is not reduce and op.regions:
            raise ValueError(
                f"tensor intrinsic {name}: its compute must be straight-line "
                f"(no '{op.name}' with a region)"
            )
    names = _arg_names(function)
    inputs = []
    for arg, arg_name in zip(function.body.block.args, names):
        assert isinstance(arg.type, TensorType)
        shape = tuple(arg.type.get_shape())
        inputs.append(Operand(arg_name, shape, arg.type.get_element_type(), scopes.get(arg_name)))
    out_name = compute.tensor_name.data
    out_type = compute.result.type
    output = Operand(out_name, compute.shape, out_type.get_element_type(), scopes.get(out_name))
    return TensorIntrin(name, function, inputs, output, dict(lowerings))


def _arg_names(function: func.FuncOp) -> list[str]:
    from tilecraft.dialects.sched_replay import _arg_names as names

    return names(function)


def register(intrin: TensorIntrin) -> TensorIntrin:
    """Register `intrin` under its name (a later declaration of a name replaces it)."""
    _load_builtins()
    _REGISTRY[intrin.name] = intrin
    return intrin


def lookup(name: str) -> TensorIntrin | None:
    """The intrinsic registered as `name` (the built-ins are declared on first use)."""
    _load_builtins()
    return _REGISTRY.get(name)


def registered_names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.parser import Parser

    ctx = Context()
    for dialect in (Builtin, Func, Arith, te.TE):
        ctx.load_dialect(dialect)
    for name, text in _builtin_texts().items():
        module = Parser(ctx, text, name).parse_module()
        function = module.body.block.first_op
        assert isinstance(function, func.FuncOp)
        function.detach()
        lowerings: dict[str, object] = {"llvm": LoopKernel()}
        if name == "gemv_1x16x16_i8":
            lowerings["accel"] = "gemm"  # the accelerator's GEMM unit at VTA's default spec
        _REGISTRY.setdefault(name, intrin_from_function(name, function, lowerings))


def _builtin_texts() -> dict[str, str]:
    """The built-in intrinsics, as te IR (what `te.decl_tensor_intrin` would make):

    - `gemm_4x16x8_f32`: `C[4x16] += A[4x8] * B[8x16]` in float32; on the CPU a
      register-tile micro-kernel (the 16-wide j axis one vector, i and k unrolled:
      32 vector FMAs on 4 rows of accumulators per call);
    - `gemv_1x16x16_i8`: `C[1x16] += A[1x16] * W[16x16]^T`, int8 x int8 summed in
      int32: the shape of VTA's GEMM at its default spec (BATCH 1, BLOCK 16),
      lowered for the CPU and (its "accel" lowering) to the accelerator's GEMM unit
      (`topi/accel_intrin.py` declares the shapes of other specs).
    """
    return {
        "gemm_4x16x8_f32": _gemm_text("gemm_4x16x8_f32", 4, 16, 8, "f32", "f32", "arith.mulf"),
        "gemv_1x16x16_i8": _gemm_text("gemv_1x16x16_i8", 1, 16, 16, "i8", "i32", "arith.muli", transposed=True),
    }


def _gemm_text(name: str, m: int, n: int, k: int, t_in: str, t_acc: str, mul: str, transposed: bool = False) -> str:
    b_shape, b_index = (f"{n}x{k}", "%j, %k") if transposed else (f"{k}x{n}", "%k, %j")
    b_name = "W" if transposed else "B"
    widen = t_in != t_acc
    a_val, b_val = ("%a32", "%b32") if widen else ("%a", "%b")
    cast_a = f"      %a32 = arith.extsi %a : {t_in} to {t_acc}\n" if widen else ""
    cast_b = f"      %b32 = arith.extsi %b : {t_in} to {t_acc}\n" if widen else ""
    return (
        f'func.func @{name}(%A: tensor<{m}x{k}x{t_in}> {{tc.name = "A"}}, '
        f'%{b_name}: tensor<{b_shape}x{t_in}> {{tc.name = "{b_name}"}}) -> tensor<{m}x{n}x{t_acc}> {{\n'
        f'  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<{m}x{n}x{t_acc}> {{\n'
        f'    %s = te.reduce sum (%k: "k" = 0 to {k}) -> {t_acc} {{\n'
        f"      %a = te.read %A[%i, %k] : tensor<{m}x{k}x{t_in}>\n"
        f"{cast_a}"
        f"      %b = te.read %{b_name}[{b_index}] : tensor<{b_shape}x{t_in}>\n"
        f"{cast_b}"
        f"      %p = {mul} {a_val}, {b_val} : {t_acc}\n"
        f"      te.yield %p : {t_acc}\n"
        "    }\n"
        f"    te.yield %s : {t_acc}\n"
        "  }\n"
        f"  func.return %C : tensor<{m}x{n}x{t_acc}>\n"
        "}\n"
    )


def unknown_message(name: str) -> str:
    return f"no tensor intrinsic is named '{name}' (registered: {', '.join(registered_names()) or 'none'})"
