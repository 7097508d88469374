"""`FunctionBuilder`: inserts `llvm`-dialect ops into one `llvm.func`, the way
llvmlite's `IRBuilder` appends instructions.

`convert-loop-to-llvm`'s patterns use one builder per function: each pattern
puts the builder before the op it replaces (`at(op)`) and lets it write the
LLVM ops there.

Every function starts with a *prologue* block that holds only constants and
`llvm.alloca`s and branches to the first real block. Constants are created there
once per (type, value) and reused everywhere (the prologue dominates the whole
function), and "local" buffers are allocated there so LLVM's SROA/mem2reg can turn
them into SSA values. Integer arithmetic on known constants is folded here in
Python: unrolled loops produce many constant indices, and folding them keeps the
IR small, which keeps both xDSL and LLVM fast. Pure values (address arithmetic,
GEPs, splats) already computed in the current block are reused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from tilecraft.dialects import llvmx
from tilecraft.utils.attrs import integer_attr, integer_type, vector_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

_NARROW_FLOATS = (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2Type,
    Float8E5M2FNUZType,
    Float8E8M0FNUType,
    Float4E2M1FNType,
)
NSW = integer_attr(llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP]).to_int(), 32)  # as ops store it
PTR = llvm.LLVMPointerType()


# Loads, stores and GEPs are most of a kernel's ops: made with `create` from
# shared attributes, they skip the constructors' per-op attribute building.
_NOT_ATOMIC = integer_attr(0, i64)
_NO_WRAP_FLAGS = integer_attr(0, 32)
_INBOUNDS = UnitAttr()


@lru_cache(maxsize=256)
def _constant_indices(indices: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, indices)


def load_op(pointer: SSAValue, t: Attribute, alignment: int) -> llvm.LoadOp:
    """`llvm.load` of a `t` at `pointer`, not atomic, not volatile."""
    properties = {"ordering": _NOT_ATOMIC, "alignment": integer_attr(alignment, i64)}
    return llvm.LoadOp.create(operands=[pointer], result_types=[t], properties=properties)


def store_op(value: SSAValue, pointer: SSAValue, alignment: int) -> llvm.StoreOp:
    """`llvm.store` of `value` at `pointer`, not atomic, not volatile."""
    properties = {"ordering": _NOT_ATOMIC, "alignment": integer_attr(alignment, i64)}
    return llvm.StoreOp.create(operands=[value, pointer], properties=properties)


def gep_op(ptr: SSAValue, indices: Sequence[int], elem_type: Attribute, ssa_indices: Sequence[SSAValue] = ()) -> llvm.GEPOp:
    """An inbounds `llvm.getelementptr` (`llvm.GEP_USE_SSA_VAL` in `indices` takes
    the next of `ssa_indices`), as `llvm.GEPOp(..., inbounds=True)` makes it."""
    properties = {
        "rawConstantIndices": _constant_indices(tuple(indices)),
        "elem_type": elem_type,
        "noWrapFlags": _NO_WRAP_FLAGS,
        "inbounds": _INBOUNDS,
    }
    return llvm.GEPOp.create(operands=[ptr, *ssa_indices], result_types=[PTR], properties=properties)


def scalar_type(t: Attribute) -> Attribute:
    """The LLVM type of a loop-level value: index is i64, a memref is a pointer, a
    float type LLVM (or llvmlite) lacks (bf16, the float8 and float4 types: storage
    types, converted by bit arithmetic, see frontends/te/narrow.py) the integer of
    its width, on scalars and vectors alike."""
    kind = _TYPE_KINDS.get(type(t))
    if kind is None:
        kind = _TYPE_KINDS[type(t)] = _type_kind(t)
    if kind == "same":
        return t
    if kind == "index":
        return i64
    if kind == "memref":
        return PTR
    if kind == "vector":
        if isinstance(t.element_type, _NARROW_FLOATS):  # type: ignore[attr-defined]
            return vector_type(integer_type(t.element_type.bitwidth), t.get_shape()[0])  # type: ignore[attr-defined]
        return t
    return integer_type(t.bitwidth)  # type: ignore[attr-defined]


# scalar_type's answer depends on the attribute's class (and a vector's element):
# looked up by class, it costs no chain of isinstance checks on every value.
_TYPE_KINDS: dict[type, str] = {}


def _type_kind(t: Attribute) -> str:
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, MemRefType):
        return "memref"
    if isinstance(t, VectorType):
        return "vector"
    if isinstance(t, _NARROW_FLOATS):
        return "narrow"
    return "same"


@lru_cache(maxsize=64)
def _zero_mask(width: int) -> DenseArrayBase:
    """A shuffle mask that takes lane 0 `width` times (a splat)."""
    return DenseArrayBase.from_list(i32, [0] * width)


def element_of(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def width_of(t: Attribute) -> int | None:
    return t.get_shape()[0] if isinstance(t, VectorType) else None


class FunctionBuilder:
    """Appends ops to the current block of one `llvm.func` (see the module docstring)."""

    def __init__(self, func: llvm.FuncOp, first: Block | None = None):
        """A prologue for `func` that branches to `first` (a new empty block if None)."""
        self.func = func
        inputs = func.function_type.inputs.data
        self.prologue = Block(arg_types=inputs)
        func.body.add_block(self.prologue)
        first = first if first is not None else Block()
        self.prologue.add_op(llvm.BrOp(first))
        self.block = first
        # Insert before this op of `block`, or at its end if None.
        self.before: Operation | None = None
        func.body.add_block(first)
        # Python values of the constants made here, for folding.
        self.known: dict[SSAValue, int | float] = {}
        self._constants: dict[tuple[Attribute, object], SSAValue] = {}
        # Pure values already computed in the current block (splats, index
        # arithmetic, addresses), so an unrolled or vectorized body does not
        # compute them again; valid only in the block that made them.
        self._local: dict[tuple, SSAValue] = {}

    @property
    def args(self) -> Sequence[SSAValue]:
        return self.prologue.args

    # Blocks -----------------------------------------------------------------

    def start(self, block: Block) -> None:
        """Put `block` after the current block and insert at its end from now on.

        (Blocks stay in an order where definitions come before uses.)"""
        self.func.body.insert_block_after(block, self.block)
        self.block = block
        self.before = None
        self._local = {}

    def resume(self, block: Block) -> None:
        """Insert at the end of `block` again (already in the function)."""
        self.block = block
        self.before = None
        self._local = {}

    def at(self, op: Operation) -> FunctionBuilder:
        """Insert before `op` from now on (the values reused so far stay valid
        within one block: patterns visit a block's ops in order)."""
        block = op.parent_block()
        assert block is not None
        if block is not self.block:
            self._local = {}
        self.block = block
        self.before = op
        return self

    def add(self, op: Operation) -> SSAValue:
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def hoist(self, op: Operation) -> SSAValue:
        """Put `op` in the prologue (constants, allocas)."""
        self.prologue.insert_op_before(op, self.prologue.last_op)  # type: ignore[arg-type]
        return op.results[0]

    def br(self, dest: Block, *args: SSAValue) -> None:
        self.add(llvm.BrOp(dest, *args))

    def cond_br(
        self,
        cond: SSAValue,
        then: Block,
        then_args: Sequence[SSAValue],
        other: Block,
        other_args: Sequence[SSAValue] = (),
    ) -> None:
        self.add(llvm.CondBrOp(cond, then, then_args, other, other_args))

    # Constants --------------------------------------------------------------

    def const(self, value: int | float | bool, t: Attribute) -> SSAValue:
        """A scalar or splat-vector constant of LLVM type `t`, made once per function."""
        if isinstance(value, bool):
            value = int(value)
        key = (t, value)
        if key not in self._constants:
            elem = element_of(t)
            if isinstance(elem, AnyFloat):
                value = float(value)
                attr = FloatAttr(value, elem)
            else:
                assert isinstance(elem, IntegerType)
                value = _wrap(int(value), elem.width.data)
                attr = IntegerAttr(value, elem)
            if isinstance(t, VectorType):
                attr = DenseIntOrFPElementsAttr.from_list(t, [value] * width_of(t))
            result = self.hoist(llvm.ConstantOp(attr, t))
            self.known[result] = value
            self._constants[key] = result
        return self._constants[key]

    def index(self, value: int) -> SSAValue:
        return self.const(value, i64)

    def const_vector(self, values: Sequence[int | float], t: VectorType) -> SSAValue:
        key = (t, tuple(values))
        if key not in self._constants:
            attr = DenseIntOrFPElementsAttr.from_list(t, list(values))
            self._constants[key] = self.hoist(llvm.ConstantOp(attr, t))
        return self._constants[key]

    def undef(self, t: Attribute) -> SSAValue:
        key = (t, "undef")
        if key not in self._constants:
            self._constants[key] = self.hoist(llvm.UndefOp(t))
        return self._constants[key]

    def iota(self, width: int, step: int = 1) -> SSAValue:
        """<0, step, 2*step, ...> as a vector of i64."""
        return self.const_vector([i * step for i in range(width)], vector_type(i64, width))

    def splat(self, value: SSAValue, width: int) -> SSAValue:
        """`value` in every lane of a `width`-lane vector."""
        vtype = vector_type(value.type, width)
        if value in self.known:
            return self.const(self.known[value], vtype)
        key = ("splat", value, width)
        if key not in self._local:
            undef = self.undef(vtype)
            one = self.add(llvm.InsertElementOp(undef, value, self.const(0, i32)))
            self._local[key] = self.add(llvm.ShuffleVectorOp(one, one, _zero_mask(width), vtype))
        return self._local[key]

    def pure(self, key: tuple, make: Callable[[], Operation]) -> SSAValue:
        """The value of pure op `make()`, reused if this block already computed `key`."""
        if key not in self._local:
            self._local[key] = self.add(make())
        return self._local[key]

    def finish(self) -> None:
        """Drop prologue constants nothing ended up using (folding leaves some)."""
        for op in reversed(list(self.prologue.ops)):
            if isinstance(op, llvm.ConstantOp | llvm.UndefOp) and not op.results[0].uses:
                self.prologue.erase_op(op)

    def extract(self, vector: SSAValue, lane: int) -> SSAValue:
        return self.add(llvmx.ExtractElementOp(vector, self.const(lane, i64)))

    # Integer arithmetic with folding ----------------------------------------

    def iadd(self, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        if a in self.known and b in self.known:
            return self.const(self.known[a] + self.known[b], a.type)
        if self.known.get(b) == 0:
            return a
        if self.known.get(a) == 0:
            return b
        return self.pure(
            ("add", a, b, nsw), lambda: llvm.AddOp(a, b, overflow=NSW) if nsw else llvm.AddOp(a, b)
        )

    def isub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a in self.known and b in self.known:
            return self.const(self.known[a] - self.known[b], a.type)
        if self.known.get(b) == 0:
            return a
        return self.pure(("sub", a, b), lambda: llvm.SubOp(a, b))

    def imul(self, a: SSAValue, b: SSAValue, nsw: bool = False) -> SSAValue:
        if a in self.known and b in self.known:
            return self.const(self.known[a] * self.known[b], a.type)
        for x, y in ((a, b), (b, a)):
            if self.known.get(y) == 1:
                return x
            if self.known.get(y) == 0:
                return y
        return self.pure(
            ("mul", a, b, nsw), lambda: llvm.MulOp(a, b, overflow=NSW) if nsw else llvm.MulOp(a, b)
        )

    def icmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(predicate).to_int()
        return self.add(llvm.ICmpOp(a, b, integer_attr(flag, i64)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(cond.type, VectorType):
            return self.add(llvmx.SelectOp(cond, a, b))
        return self.add(llvm.SelectOp(cond, a, b))

    def linear(self, terms: Sequence[tuple[SSAValue, int | SSAValue]], offset: int) -> SSAValue:
        """`offset + sum(value * coefficient)` in i64, for addresses (hence nsw);
        a coefficient is an int or an i64 value (a stride of a dynamic shape)."""
        total: SSAValue | None = None
        for value, coefficient in terms:
            if not isinstance(coefficient, int):
                term = self.imul(value, coefficient, nsw=True)
                total = term if total is None else self.iadd(total, term, nsw=True)
                continue
            if value in self.known:
                offset += self.known[value] * coefficient  # type: ignore[operator]
                continue
            term = self.imul(value, self.index(coefficient), nsw=True)
            total = term if total is None else self.iadd(total, term, nsw=True)
        if total is None:
            return self.index(offset)
        return self.iadd(total, self.index(offset), nsw=True)

    def gep(self, ptr: SSAValue, offset: SSAValue, elem_type: Attribute) -> SSAValue:
        """`ptr + offset` elements of `elem_type` (an inbounds GEP, LLVM's favourite)."""
        if offset in self.known:
            constant = self.known[offset]
            if constant == 0:
                return ptr
            if -(2**31) < constant < 2**31:  # fits GEP's constant index field
                return self.pure(
                    ("gep", ptr, constant, elem_type),
                    lambda: gep_op(ptr, [constant], elem_type),
                )
        return self.pure(
            ("gep", ptr, offset, elem_type),
            lambda: gep_op(ptr, [llvm.GEP_USE_SSA_VAL], elem_type, [offset]),
        )

    def alloca(self, elem_type: Attribute, count: int, alignment: int) -> SSAValue:
        """`count` elements on the stack, in the prologue so LLVM can promote them."""
        array = llvm.LLVMArrayType(IntAttr(count), elem_type)
        return self.hoist(llvm.AllocaOp(self.const(1, i64), array, alignment=alignment))

    def call(
        self, callee: str, args: Sequence[SSAValue], result: Attribute | None = None
    ) -> SSAValue | None:
        return self.add(llvm.CallOp(callee, *args, return_type=result))

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute | None) -> SSAValue:
        """Call LLVM intrinsic `name` (fully mangled, e.g. `llvm.smax.v8i32`)."""
        return self.add(llvm.CallIntrinsicOp(name, list(args), [] if result is None else [result]))


def mangle(t: Attribute) -> str:
    """The type suffix of an overloaded intrinsic: f32, i64, v16f32."""
    width = width_of(t)
    elem = element_of(t)
    if isinstance(elem, IntegerType):
        name = f"i{elem.width.data}"
    elif isinstance(elem, llvm.LLVMPointerType):
        name = "p0"
    else:
        name = {32: "f32", 64: "f64", 16: "f16"}[elem.bitwidth]  # type: ignore[attr-defined]
    return name if width is None else f"v{width}{name}"


def _wrap(value: int, bits: int) -> int:
    """`value` as a signed `bits`-wide integer (how LLVM constants are printed)."""
    if bits == 1:
        return value & 1
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value

