"""convert-loop-to-accel: a loop function for the accelerator becomes an `accel.program`.

The input is what a VTA-style schedule lowers to once `inject-dma` and
`inject-virtual-threads` have run: loops over tiles (the host's part), buffers in
the accelerator's scopes (`loop.alloc ... inp_buffer|wgt_buffer|acc_buffer`),
`loop.dma` copies in and out of them, the GEMM intrinsic (`loop.tensor_intrin`
of an intrinsic with an "accel" lowering), the reduction's zero-fill of the
accumulator and elementwise integer math on it (the requantizing epilogue). The
accelerator runs a straight instruction stream, so the host loops are unrolled
here, as VTA's runtime does when the host code runs:

- each `loop.alloc` in an accelerator scope gets an SRAM range (in elements; the
  stack of the enclosing block, so a buffer allocated in a loop body reuses its
  range every iteration: what makes the dependences between iterations real, and
  what virtual threads' separate buffers avoid);
- a `loop.dma` is a LOAD (into inp/wgt/acc) or a STORE (from the accumulator's
  output buffer), its DRAM address the function argument's place in the DRAM
  layout plus the offset, in elements of the memory type;
- a *compute nest* — perfectly nested loops around one GEMM intrinsic, one store
  of 0 into an accumulator buffer, or one elementwise store into one — becomes
  as few instructions as possible: its index functions are affine in the nest's
  loop variables (checked on corners and sample points: anything else is unrolled
  further), the two longest loops become the instruction's iter_out/iter_in with
  their factors, the others are enumerated into a micro-op kernel (named by its
  content, so an identical kernel is one kernel: the backend loads it once while
  it stays resident);
- a zero-fill is a GEMM with `reset`; an elementwise chain (`v = acc[i]; v = v + b[j];
  v = max(v, 0); v = (v + h) // 2^s; v = min(max(v, -128), 127); out[i] = trunc(v)`)
  is one ALU instruction per operation (ADD, MAX, MIN, SHR, MUL with an immediate
  or another accumulator buffer's element), computed in place; when the chain
  writes another buffer than it reads, that buffer is zeroed (GEMM reset) and the
  source added into it first. The narrowing to int8 is the STORE's.

Dependences are not decided here: the program has no tokens, and
`insert-dependences` adds the flags from what each instruction touches.
The program takes the function's name; its `accel.buffer`s are the function's
arguments, in order, named by `tc.name` (the runtime binds arrays by them).

Anything else in the function (a CPU-only op, a global buffer allocated inside,
an index that the accelerator cannot address) is an error at that op.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, IntegerType, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilecraft.backends.accel import isa
from tilecraft.backends.accel.program import elem_bytes, spec_attribute
from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.dialects import accel, te
from tilecraft.dialects.loop import (
    ACCEL_SCOPES,
    AllocOp,
    DmaOp,
    ForOp,
    GuardOp,
    MemoryScope,
    TensorIntrinOp,
    YieldOp,
    buffer_scope,
)
from tilecraft.utils.diagnostics import OpError

PASS = "convert-loop-to-accel"

_MEMORY_TYPE = {
    MemoryScope.INP_BUFFER: isa.MemoryType.INP,
    MemoryScope.WGT_BUFFER: isa.MemoryType.WGT,
    MemoryScope.ACC_BUFFER: isa.MemoryType.ACC,
}


def accel_gemm_lowering() -> str:
    """The value an intrinsic's "accel" lowering has when it is the GEMM unit."""
    return "gemm"


@dataclass
class _Arg:
    name: str
    memory_type: isa.MemoryType
    byte_base: int
    scalar_bytes: int
    nbytes: int


@dataclass
class _Loop:
    var: SSAValue
    extent: int


class _Affine:
    """f(v) = base + sum(coeff[k] * v[k]) over a nest's loop variables, found by finite
    differences and checked at the far corner and sample points."""

    def __init__(self, base: int, coeffs: list[int]):
        self.base, self.coeffs = base, coeffs

    def at(self, point: Sequence[int]) -> int:
        return self.base + sum(c * v for c, v in zip(self.coeffs, point))


class _NotAffine(Exception):
    pass


def _scalar_bytes(t: MemRefType) -> int:
    element = t.element_type
    width = element.width.data if isinstance(element, IntegerType) else element.bitwidth  # type: ignore[attr-defined]
    return max(1, width // 8)


def _strides(t: MemRefType) -> list[int]:
    shape = list(t.get_shape())
    return [math.prod(shape[k + 1 :]) for k in range(len(shape))]


class _Lowering:
    def __init__(self, f: func.FuncOp, spec: AccelSpec):
        self.f, self.spec = f, spec
        self.insns: list[Operation] = []
        self.kernels: dict[tuple[isa.MicroOp, ...], str] = {}
        self.kernel_ops: list[accel.UopKernelOp] = []
        self.next_free = {scope: 0 for scope in ACCEL_SCOPES}
        self.depth = {
            MemoryScope.INP_BUFFER: spec.inp_depth,
            MemoryScope.WGT_BUFFER: spec.wgt_depth,
            MemoryScope.ACC_BUFFER: spec.acc_depth,
        }
        self.sram: dict[SSAValue, int] = {}
        self.args: dict[SSAValue, _Arg] = {}

    # -- DRAM: the function's arguments ------------------------------------------
    def plan_arguments(self) -> list[accel.BufferOp]:
        types: dict[SSAValue, tuple[isa.MemoryType, Operation]] = {}
        for op in self.f.walk():
            if isinstance(op, DmaOp):
                arg, kind = (op.src, _MEMORY_TYPE[buffer_scope(op.dst)]) if op.is_load else (op.dst, isa.MemoryType.OUT)
                if not isinstance(arg, BlockArgument) or arg.owner is not self.f.body.block:
                    raise OpError(op, f"{PASS}: a DMA moves data to or from an argument of the function")
                seen = types.get(arg)
                if seen is not None and seen[0] != kind:
                    raise OpError(op, f"{PASS}: argument {self._arg_name(arg)} is moved as {kind.name} here and "
                                  f"as {seen[0].name} by an earlier DMA; an argument has one element kind")
                types.setdefault(arg, (kind, op))
        buffers, cursor = [], 0
        align = max(elem_bytes(kind, self.spec) for kind in _MEMORY_TYPE.values())  # the weight tile's
        for arg in self.f.body.block.args:
            t = arg.type
            if not isinstance(t, MemRefType):
                raise OpError(self.f, f"{PASS}: argument {self._arg_name(arg)} is not a buffer ({t})")
            name = self._arg_name(arg)
            nbytes = math.prod(t.get_shape()) * _scalar_bytes(t)
            kind, _ = types.get(arg, (isa.MemoryType.INP, None))
            size = elem_bytes(kind, self.spec)
            if nbytes % size:
                raise OpError(self.f, f"{PASS}: argument {name} ({t}, {nbytes} bytes) is not a whole number of "
                              f"{kind.name} elements of {size} bytes")
            self.args[arg] = _Arg(name, kind, cursor, _scalar_bytes(t), nbytes)
            buffers.append(accel.BufferOp(name, kind.name.lower(), cursor // size, nbytes // size))
            cursor += -(-nbytes // align) * align
        return buffers

    def _arg_name(self, arg: BlockArgument) -> str:
        attrs = self.f.arg_attrs.data[arg.index].data if self.f.arg_attrs is not None else {}
        name = attrs.get("tc.name")
        return name.data if isinstance(name, StringAttr) else (arg.name_hint or f"arg{arg.index}")

    # -- values ----------------------------------------------------------------------
    def value(self, v: SSAValue, env: dict[SSAValue, int]) -> int:
        if v in env:
            return env[v]
        op = v.owner
        if isinstance(v, BlockArgument):
            raise OpError(self.f, f"{PASS}: the value %{v.name_hint or '?'} is not known while the host loops run")
        result: int
        match op:
            case arith.ConstantOp() if isinstance(op.value, IntegerAttr):
                result = op.value.value.data
            case arith.AddiOp():
                result = self.value(op.lhs, env) + self.value(op.rhs, env)
            case arith.SubiOp():
                result = self.value(op.lhs, env) - self.value(op.rhs, env)
            case arith.MuliOp():
                result = self.value(op.lhs, env) * self.value(op.rhs, env)
            case arith.FloorDivSIOp():
                result = self.value(op.lhs, env) // self.value(op.rhs, env)
            case arith.DivSIOp():
                a, b = self.value(op.lhs, env), self.value(op.rhs, env)
                result = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            case arith.RemSIOp():
                a, b = self.value(op.lhs, env), self.value(op.rhs, env)
                result = a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1))
            case te.FloorModOp():
                result = self.value(op.operands[0], env) % self.value(op.operands[1], env)
            case arith.MaxSIOp():
                result = max(self.value(op.lhs, env), self.value(op.rhs, env))
            case arith.MinSIOp():
                result = min(self.value(op.lhs, env), self.value(op.rhs, env))
            case arith.SelectOp():
                result = self.value(op.lhs if self.value(op.cond, env) else op.rhs, env)
            case arith.CmpiOp():
                a, b = self.value(op.lhs, env), self.value(op.rhs, env)
                result = int(_compare(op.predicate.value.data, a, b))
            case arith.AndIOp():
                result = self.value(op.lhs, env) & self.value(op.rhs, env)
            case arith.OrIOp():
                result = self.value(op.lhs, env) | self.value(op.rhs, env)
            case arith.IndexCastOp():
                result = self.value(op.input, env)
            case _:
                raise OpError(op, f"{PASS}: '{op.name}' cannot be computed by the host while it builds the stream")
        env[v] = result
        return result

    def flat(self, ref: SSAValue, indices: Sequence[SSAValue], env: dict[SSAValue, int]) -> int:
        t = ref.type
        assert isinstance(t, MemRefType)
        return sum(self.value(i, env) * s for i, s in zip(indices, _strides(t)))

    # -- the host program ------------------------------------------------------------
    def run(self) -> accel.ProgramOp:
        buffers = self.plan_arguments()
        self.block(self.f.body.block, {})
        self.insns.append(accel.FinishOp())
        body = Block([*buffers, *self.kernel_ops, *self.insns])
        spec_attr = spec_attribute(self.spec)
        return accel.ProgramOp(self.f.sym_name.data, Region(body), spec_attr)

    def block(self, block: Block, env: dict[SSAValue, int]) -> None:
        saved = dict(self.next_free)
        for op in block.ops:
            if isinstance(op, ForOp):
                if self.compute_nest(op, env):
                    continue
                for v in range(op.lb.data, op.ub.data):
                    self.block(op.body.block, {**env, op.body.block.args[0]: v})
            elif isinstance(op, AllocOp):
                self.allocate(op)
            elif isinstance(op, DmaOp):
                self.dma(op, env)
            elif isinstance(op, (TensorIntrinOp, memref.StoreOp)):
                self.leaf([], op, env)
            elif isinstance(op, GuardOp):
                if self.value(op.cond, env):
                    self.block(op.body.block, dict(env))
            elif isinstance(op, (YieldOp, func.ReturnOp, memref.LoadOp)) or _is_scalar_math(op):
                continue
            else:
                raise OpError(op, f"{PASS}: '{op.name}' has no accelerator instruction (the accelerator runs "
                              "DMAs, the GEMM intrinsic and elementwise integer math on its accumulator)")
        self.next_free = saved

    def allocate(self, op: AllocOp) -> None:
        scope = op.scope.data
        if scope not in ACCEL_SCOPES:
            raise OpError(op, f"{PASS}: a {scope.value} buffer cannot live on the accelerator; allocate in "
                          "inp_buffer, wgt_buffer or acc_buffer (cache_read/cache_write/set_scope)")
        t = op.results[0].type
        elem = self.element(scope)
        count = math.prod(t.get_shape())
        if count % elem:
            raise OpError(op, f"{PASS}: {t} is not a whole number of {scope.value} elements of {elem} values")
        base = self.next_free[scope]
        if base + count // elem > self.depth[scope]:
            raise OpError(op, f"{PASS}: the {scope.value} holds {self.depth[scope]} elements; this buffer needs "
                          f"[{base}, {base + count // elem}) with what is live around it: use smaller tiles")
        self.sram[op.results[0]] = base
        self.next_free[scope] = base + count // elem

    def element(self, scope: MemoryScope) -> int:
        return self.spec.batch * self.spec.block * (self.spec.block if scope == MemoryScope.WGT_BUFFER else 1)

    # -- DMA ----------------------------------------------------------------------------
    def dma(self, op: DmaOp, env: dict[SSAValue, int]) -> None:
        load = op.is_load
        arg_value, onchip = (op.src, op.dst) if load else (op.dst, op.src)
        arg = self.args[arg_value]
        scope = buffer_scope(onchip)
        kind = _MEMORY_TYPE[scope] if load else isa.MemoryType.OUT
        elem = op.elem.data
        if elem != self.element(scope):
            raise OpError(op, f"{PASS}: a DMA element of {elem} values; the {scope.value} element has "
                          f"{self.element(scope)}")
        size = elem_bytes(kind, self.spec)
        global_indices, onchip_indices = (op.src_indices, op.dst_indices) if load else (op.dst_indices, op.src_indices)
        byte = arg.byte_base + self.flat(arg_value, global_indices, env) * arg.scalar_bytes
        if byte % size or elem * arg.scalar_bytes != size:
            raise OpError(op, f"{PASS}: {arg.name} is read in elements of {elem} x {arg.scalar_bytes} bytes "
                          f"from byte {byte}; a {kind.name} element is {size} aligned bytes")
        onchip_flat = self.flat(onchip, onchip_indices, env)
        sram = self.sram[onchip] + onchip_flat // elem
        y, x = self.value(op.y_size, env), self.value(op.x_size, env)
        pads = [self.value(p, env) for p in op.pads]
        if y * x == 0 and not any(pads):
            return
        cls = accel.LoadOp if load else accel.StoreOp
        self.insns.append(cls(kind.name.lower(), sram_base=sram, dram_base=byte // size, y_size=y, x_size=x,
                              x_stride=op.x_stride.data, pads=pads if load else (0, 0, 0, 0)))

    # -- compute nests ------------------------------------------------------------------
    def compute_nest(self, top: ForOp, env: dict[SSAValue, int]) -> bool:
        loops, body = [top], top.body.block
        while True:
            inner = [op for op in body.ops if not isinstance(op, YieldOp) and not _is_scalar_math(op)
                     and not isinstance(op, memref.LoadOp)]
            if len(inner) == 1 and isinstance(inner[0], ForOp):
                loops.append(inner[0])
                body = inner[0].body.block
                continue
            break
        if not inner or not all(isinstance(op, (TensorIntrinOp, memref.StoreOp)) for op in inner):
            return False
        if len(inner) > 1 and not _distributable(inner):
            return False
        nest = [_Loop(lp.body.block.args[0], lp.ub.data - lp.lb.data) for lp in loops]
        lower = [lp.lb.data for lp in loops]
        saved = (len(self.insns), len(self.kernel_ops), dict(self.kernels))
        for leaf in inner:  # the statements of the body, each over the whole nest (see _distributable)
            if not self.leaf(nest, leaf, env, lower=lower):
                del self.insns[saved[0] :], self.kernel_ops[saved[1] :]
                self.kernels = saved[2]
                return False
        return True

    def affine(self, loops: list[_Loop], lower: list[int], env, f) -> _Affine:
        def at(point):
            e = dict(env)
            e.update({lp.var: lo + p for lp, lo, p in zip(loops, lower, point)})
            return f(e)

        zero = [0] * len(loops)
        base = at(zero)
        coeffs = []
        for k, lp in enumerate(loops):
            if lp.extent == 1:
                coeffs.append(0)
                continue
            unit = list(zero)
            unit[k] = 1
            coeffs.append(at(unit) - base)
        fit = _Affine(base, coeffs)
        samples = [[lp.extent - 1 for lp in loops]]
        samples += [[(7 * (k + 1) + 3 * s) % lp.extent for k, lp in enumerate(loops)] for s in range(3)]
        for point in samples:
            if at(point) != fit.at(point):
                raise _NotAffine()
        return fit

    def leaf(self, loops: list[_Loop], op: Operation, env: dict[SSAValue, int], lower: list[int] | None = None) -> bool:
        """Emit the instructions of one compute nest; False (nothing emitted) if its
        indices are not affine in its loops, so the caller unrolls its outer loop."""
        lower = lower or [0] * len(loops)
        try:
            if isinstance(op, TensorIntrinOp):
                self.gemm(loops, lower, op, env)
            else:
                self.store(loops, lower, op, env)
        except _NotAffine:
            if not loops:
                raise OpError(op, f"{PASS}: the indices of this statement are not affine") from None
            return False
        return True

    def _element_index(self, buffer: SSAValue, fit: _Affine, scope: MemoryScope, op: Operation) -> _Affine:
        elem = self.element(scope)
        if fit.base % elem or any(c % elem for c in fit.coeffs):
            raise OpError(op, f"{PASS}: {buffer.name_hint or 'a buffer'} is addressed off its element grid "
                          f"({elem} values an element)")
        return _Affine(self.sram[buffer] + fit.base // elem, [c // elem for c in fit.coeffs])

    def gemm(self, loops: list[_Loop], lower: list[int], op: TensorIntrinOp, env) -> None:
        from tilecraft.dialects.tensor_intrin import lookup

        intrin = lookup(op.intrin.data)
        if intrin is None or intrin.lowering("accel") != accel_gemm_lowering():
            raise OpError(op, f"{PASS}: tensor intrinsic '{op.intrin.data}' has no accelerator lowering "
                          "(declare it with lowerings={'accel': 'gemm'})")
        roles: dict[MemoryScope, tuple[SSAValue, list[SSAValue]]] = {}
        for buffer, indices in op.operand_regions():
            scope = buffer_scope(buffer)
            if scope not in ACCEL_SCOPES or scope in roles:
                raise OpError(op, f"{PASS}: the GEMM reads an inp_buffer and a wgt_buffer region and updates an "
                              f"acc_buffer region; {buffer.name_hint or 'an operand'} is in {scope.value}")
            roles[scope] = (buffer, indices)
        if set(roles) != set(ACCEL_SCOPES):
            raise OpError(op, f"{PASS}: the GEMM needs one operand in each of inp_buffer, wgt_buffer, acc_buffer")
        fits = {}
        for scope, (buffer, indices) in roles.items():
            fit = self.affine(loops, lower, env, lambda e, b=buffer, i=indices: self.flat(b, i, e))
            fits[scope] = self._element_index(buffer, fit, scope, op)
        dst, src, wgt = fits[MemoryScope.ACC_BUFFER], fits[MemoryScope.INP_BUFFER], fits[MemoryScope.WGT_BUFFER]
        kernel, shape = self.kernel(loops, [dst, src, wgt])
        self.insns.append(accel.GemmOp(kernel=kernel, iter_out=shape.iter_out, iter_in=shape.iter_in,
                                       dst=shape.factors[0], src=shape.factors[1], wgt=shape.factors[2]))

    def kernel(self, loops: list[_Loop], fits: list[_Affine]) -> tuple[str, _Shape]:
        """The two longest loops as the instruction's loop levels, the others enumerated
        into a micro-op kernel (named by its content)."""
        order = sorted(range(len(loops)), key=lambda k: -loops[k].extent)
        levels = sorted(k for k in order[:2] if loops[k].extent > 1)
        rest = [k for k in range(len(loops)) if k not in levels]
        uops = []
        for point in itertools.product(*(range(loops[k].extent) for k in rest)):
            full = [0] * len(loops)
            for k, v in zip(rest, point):
                full[k] = v
            values = [fit.at(full) for fit in fits]
            uops.append(isa.MicroOp(values[0], values[1], values[2] if len(values) > 2 else 0))
        while len(levels) < 2:
            levels.insert(0, None)  # type: ignore[arg-type]
        iters = [loops[k].extent if k is not None else 1 for k in levels]
        factors = [tuple(fit.coeffs[k] if k is not None else 0 for k in levels) for fit in fits]
        key = tuple(uops)
        name = self.kernels.get(key)
        if name is None:
            name = f"k{len(self.kernels)}"
            self.kernels[key] = name
            self.kernel_ops.append(accel.UopKernelOp(name, uops))
        return name, _Shape(iters[0], iters[1], factors)

    # -- stores into the accumulator: zero-fill and elementwise chains -------------------
    def store(self, loops: list[_Loop], lower: list[int], op: memref.StoreOp, env) -> None:
        target = op.memref
        if buffer_scope(target) != MemoryScope.ACC_BUFFER:
            raise OpError(op, f"{PASS}: the accelerator computes into acc_buffer buffers only; this store writes "
                          f"a {buffer_scope(target).value} buffer")
        scalar = self.affine(loops, lower, env, lambda e: self.flat(target, op.indices, e))
        element_loops, lanes = self.lanes(loops, scalar, op)
        dst = self.operand(target, scalar, scalar, element_loops, lanes, op)
        outer = [loops[k] for k in element_loops]
        if any(c == 0 for c, lp in zip(dst.coeffs, outer) if lp.extent > 1):
            raise OpError(op, f"{PASS}: a loop of this nest writes the same accumulator element again")
        if _is_zero(op.value):
            self.emit_alu_like(outer, [dst, _zero(len(outer)), _zero(len(outer))], gemm_reset=True)
            return
        chain = _chain(op.value)
        if chain is None:
            raise OpError(op, f"{PASS}: this elementwise computation has no ALU form (a chain of add, sub of a "
                          "constant, mul, max, min, shift or floor-division by a power of two, starting from one "
                          "accumulator element)")
        source, steps = chain
        src_fit = self.affine(loops, lower, env, lambda e: self.flat(source.memref, source.indices, e))
        src = self.operand(source.memref, src_fit, scalar, element_loops, lanes, op)
        if buffer_scope(source.memref) != MemoryScope.ACC_BUFFER:
            raise OpError(source, f"{PASS}: the ALU reads acc_buffer buffers; this load reads "
                          f"{buffer_scope(source.memref).value}")
        if (src.base, src.coeffs) != (dst.base, dst.coeffs):
            same_place = src.coeffs == dst.coeffs and (
                src.base - self.sram[source.memref] == dst.base - self.sram[target])
            if same_place and _only_before(source.memref, op) and _only_after(target, op):
                # the source dies here and the destination is born here: compute in place
                self.sram[target] = self.sram[source.memref]
                dst = src
            else:
                self.emit_alu_like(outer, [dst, _zero(len(outer)), _zero(len(outer))], gemm_reset=True)
                self.emit_alu_like(outer, [dst, src], opcode="add")
        for step in steps:
            if step.operand is None:
                self.emit_alu_like(outer, [dst, dst], opcode=step.opcode, imm=step.imm, at=step.op)
                continue
            other = step.operand
            fit = self.affine(loops, lower, env, lambda e: self.flat(other.memref, other.indices, e))
            if buffer_scope(other.memref) != MemoryScope.ACC_BUFFER:
                raise OpError(other, f"{PASS}: the ALU's tensor operand must be in acc_buffer "
                              f"(cache_read it into acc_buffer), not {buffer_scope(other.memref).value}")
            operand = self.operand(other.memref, fit, scalar, element_loops, lanes, step.op)
            self.emit_alu_like(outer, [dst, operand], opcode=step.opcode, at=step.op)

    def lanes(self, loops: list[_Loop], scalar: _Affine, op: Operation) -> tuple[list[int], list[int]]:
        """Split a scalar nest into the loops over an element's lanes and those over
        elements: the lanes must be innermost-contiguous and cover one element."""
        elem = self.element(MemoryScope.ACC_BUFFER)
        lane_loops = [k for k in range(len(loops)) if 0 < scalar.coeffs[k] < elem and loops[k].extent > 1]
        covered = 1
        for k in sorted(lane_loops, key=lambda k: scalar.coeffs[k]):
            if scalar.coeffs[k] != covered:
                raise OpError(op, f"{PASS}: the loops over an accumulator element's {elem} values must walk "
                              "them contiguously")
            covered *= loops[k].extent
        if covered != elem:
            raise OpError(op, f"{PASS}: each iteration of the element loops must cover a whole accumulator element "
                          f"({elem} values), not {covered}")
        return [k for k in range(len(loops)) if k not in lane_loops], lane_loops

    def operand(self, buffer: SSAValue, fit: _Affine, scalar: _Affine, element_loops: list[int], lanes: list[int],
                op: Operation) -> _Affine:
        """An access's element index over the element loops; its lane loops must walk
        an element's values as the result's do (the ALU works on whole elements)."""
        if any(fit.coeffs[k] != scalar.coeffs[k] for k in lanes):
            raise OpError(op, f"{PASS}: {buffer.name_hint or 'an operand'} walks an element's values unlike the "
                          "result it computes (the ALU works on whole elements)")
        index = self._element_index(buffer, _project(fit, element_loops, len(fit.coeffs)), buffer_scope(buffer), op)
        return _Affine(index.base, [index.coeffs[k] for k in element_loops])

    def emit_alu_like(self, loops: list[_Loop], fits: list[_Affine], *, gemm_reset: bool = False,
                      opcode: str | None = None, imm: int | None = None, at: Operation | None = None) -> None:
        kernel, shape = self.kernel(loops, fits if len(fits) == 3 else [fits[0], fits[1]])
        if gemm_reset:
            self.insns.append(accel.GemmOp(kernel=kernel, iter_out=shape.iter_out, iter_in=shape.iter_in,
                                           dst=shape.factors[0], src=(0, 0), wgt=(0, 0), reset=True))
            return
        if imm is not None and not -(1 << 15) <= imm < (1 << 15):
            raise OpError(at, f"{PASS}: the constant {imm} does not fit the ALU's 16-bit immediate")
        self.insns.append(accel.AluOp(opcode, imm=imm, kernel=kernel, iter_out=shape.iter_out,
                                      iter_in=shape.iter_in, dst=shape.factors[0], src=shape.factors[1]))


@dataclass
class _Shape:
    iter_out: int
    iter_in: int
    factors: list[tuple[int, int]]


def _distributable(leaves: list[Operation]) -> bool:
    """Whether each statement of a loop body can run over the whole nest in turn: no
    statement touches a buffer another one writes (the threads' copies of one
    statement after inject-virtual-threads, each with its own buffers)."""
    writes, touches = [], []
    for leaf in leaves:
        if isinstance(leaf, TensorIntrinOp):
            regions = [b for b, _ in leaf.operand_regions()]
            writes.append({regions[-1]})
            touches.append(set(regions))
        else:
            loads = {op.memref for op in _loads(leaf.value)}
            writes.append({leaf.memref})
            touches.append(loads | {leaf.memref})
    return all(not (writes[a] & touches[b]) for a in range(len(leaves)) for b in range(len(leaves)) if a != b)


def _loads(value: SSAValue) -> list[memref.LoadOp]:
    found, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if isinstance(op, memref.LoadOp):
            found.append(op)
        elif _is_scalar_math(op):
            stack.extend(op.operands)
    return found


def _ancestors(op: Operation) -> list[Operation]:
    chain = [op]
    while chain[-1].parent_op() is not None:
        chain.append(chain[-1].parent_op())
    return chain


def _order(a: Operation, b: Operation) -> int:
    """-1 if a runs before b, 1 if after, 0 if one contains the other (or they are
    the same op), in program order."""
    chain_b = _ancestors(b)
    for x in _ancestors(a):
        block = x.parent_block()
        for y in chain_b:
            if y is x:
                return 0
            if block is not None and y.parent_block() is block:
                return -1 if block.get_operation_index(x) < block.get_operation_index(y) else 1
    return 0


def _nest_top(store: Operation) -> Operation:
    """The outermost loop of the perfect nest around `store` (or the store itself)."""
    top = store
    while isinstance(top.parent_op(), ForOp):
        top = top.parent_op()
    return top


def _only_before(buffer: SSAValue, store: Operation) -> bool:
    """Whether every use of `buffer` runs before the nest of `store` or inside it."""
    top = _nest_top(store)
    return all(_order(use.operation, top) <= 0 for use in buffer.uses)


def _only_after(buffer: SSAValue, store: Operation) -> bool:
    """Whether every use of `buffer` (but its allocation) runs inside the nest of
    `store` or after it."""
    top = _nest_top(store)
    return all(_order(use.operation, top) >= 0 for use in buffer.uses)


def _zero(n: int) -> _Affine:
    return _Affine(0, [0] * n)


def _project(fit: _Affine, keep: list[int], n: int) -> _Affine:
    return _Affine(fit.base, [fit.coeffs[k] if k in keep else 0 for k in range(n)])


def _compare(predicate: int, a: int, b: int) -> bool:
    # arith.cmpi predicates: eq ne slt sle sgt sge ult ule ugt uge
    return [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b][predicate]


def _is_scalar_math(op: Operation) -> bool:
    return op.dialect_name() == "arith" or isinstance(op, te.FloorModOp)


def _is_zero(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 0


@dataclass
class _Step:
    opcode: str
    imm: int | None
    operand: memref.LoadOp | None
    op: Operation


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _chain(value: SSAValue) -> tuple[memref.LoadOp, list[_Step]] | None:
    """`value` as ops applied in turn to one accumulator load, each with a constant
    or another load as its other operand."""
    steps: list[_Step] = []
    while True:
        op = value.owner
        if isinstance(op, memref.LoadOp):
            return op, steps[::-1]
        if isinstance(op, (arith.TruncIOp, arith.ExtSIOp)):
            value = op.input
            continue
        if not isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp,
                               arith.FloorDivSIOp, arith.ShRSIOp)):
            return None
        lhs, rhs = op.lhs, op.rhs
        c_rhs, c_lhs = _constant(rhs), _constant(lhs)
        commutes = isinstance(op, (arith.AddiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp))
        if c_rhs is None and c_lhs is not None and commutes:
            lhs, rhs, c_rhs = rhs, lhs, c_lhs
        if c_rhs is not None:
            step = _immediate(op, c_rhs)
            if step is None:
                return None
            steps.append(step)
            value = lhs
            continue
        # two tensors: the chain continues through the one that is not a plain load of
        # another buffer (or, both loads, through the left one)
        left_load, right_load = isinstance(lhs.owner, memref.LoadOp), isinstance(rhs.owner, memref.LoadOp)
        if isinstance(op, (arith.SubiOp, arith.FloorDivSIOp, arith.ShRSIOp)):
            return None
        if right_load:
            chain_value, other = lhs, rhs.owner
        elif left_load and commutes:
            chain_value, other = rhs, lhs.owner
        else:
            return None
        steps.append(_Step(_TENSOR_OPCODE[type(op)], None, other, op))
        value = chain_value


_TENSOR_OPCODE = {arith.AddiOp: "add", arith.MuliOp: "mul", arith.MaxSIOp: "max", arith.MinSIOp: "min"}


def _immediate(op: Operation, c: int) -> _Step | None:
    if isinstance(op, arith.AddiOp):
        return _Step("add", c, None, op)
    if isinstance(op, arith.SubiOp):
        return _Step("add", -c, None, op)
    if isinstance(op, arith.MuliOp):
        return _Step("mul", c, None, op)
    if isinstance(op, arith.MaxSIOp):
        return _Step("max", c, None, op)
    if isinstance(op, arith.MinSIOp):
        return _Step("min", c, None, op)
    if isinstance(op, arith.ShRSIOp) and c >= 0:
        return _Step("shr", c, None, op)
    if isinstance(op, arith.FloorDivSIOp) and c > 0 and c & (c - 1) == 0:
        return _Step("shr", c.bit_length() - 1, None, op)
    return None


@dataclass(frozen=True)
class ConvertLoopToAccelPass(ModulePass):
    """Every loop function of the module becomes an accel.program of the same name."""

    name = PASS

    spec: str = ""  # a spec file (JSON or TOML); VTA's default when empty

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        spec = load_spec(self.spec) if self.spec else default_spec()
        for f in [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration]:
            program = _Lowering(f, spec).run()
            Rewriter.replace_op(f, program)
