"""convert-loop-to-accel's code generator: a loop function walked with its host
loops unrolled (`_Lowering`), each DMA, zero-fill, GEMM nest and elementwise
chain emitted as accelerator instructions with their micro-op kernels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from tilecraft.backends.accel import isa
from tilecraft.backends.accel.program import elem_bytes, spec_attribute
from tilecraft.backends.accel.spec import AccelSpec
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
from tilecraft.lowering.convert_loop_to_accel.affine import _Affine, _Loop, _NotAffine
from tilecraft.lowering.convert_loop_to_accel.chains import _compare, _distributable, _is_scalar_math
from tilecraft.lowering.convert_loop_to_accel.alu import AluStatements
from tilecraft.lowering.convert_loop_to_accel.buffers import (
    _MEMORY_TYPE, PASS, _Arg, _scalar_bytes, _strides, accel_gemm_lowering,
)  # fmt: skip


class _Lowering(AluStatements):
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
