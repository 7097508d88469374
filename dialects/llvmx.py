"""The `llvmx` dialect: the few LLVM instructions xDSL's `llvm` dialect cannot say.

`convert-loop-to-llvm` writes xDSL's `llvm` dialect wherever it suffices and these
ops where it does not. xDSL 0.74 lacks (or restricts to scalars or floats):

- `fptosi`, `fptoui`, `uitofp` casts, and `addrspacecast`;
- `fcmp` and `select` on vectors (xDSL's take scalar `i1`/float only);
- `extractelement`;
- masked vector memory access for any element type: contiguous `masked_load`
  and `masked_store` (xDSL has a float-only masked store), `masked_gather` and
  `masked_scatter` (which need a vector of pointers, a type xDSL's GEP cannot
  produce). The gather/scatter ops therefore fold the vector GEP in: they take a
  base pointer and a vector of element offsets.

Intrinsics that are plain calls (`llvm.smax`, `llvm.tanh`, ...) need no op here:
they use `llvm.call_intrinsic`.

A loop LLVM is to unroll fully carries the unit attribute `llvmx.unroll_full`
(`UNROLL_FULL`) on its back edge, an `llvm.cond_br`: what MLIR writes as
`loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>`,
which xDSL 0.74's `llvm.cond_br` cannot hold. It becomes `!llvm.loop` metadata
with `llvm.loop.unroll.full`. A loop whose bound is known only when it runs
carries `llvmx.no_runtime_unroll` (`llvm.loop.unroll.runtime.disable`).

Why a dialect rather than patching the llvmlite module afterwards: the lowered IR
stays complete and printable, so `tilecraft-opt -p convert-loop-to-llvm` shows
every instruction and FileCheck tests can check them. `backends/llvm/translate.py`
translates these ops next to xDSL's own translator.

```mlir
%i = llvmx.fptosi %x : vector<16xf32> to vector<16xi32>
%p = llvmx.addrspacecast %shared : !llvm.ptr<3> to !llvm.ptr
%m = llvmx.fcmp "olt" %a, %b : vector<16xf32> -> vector<16xi1>
%s = llvmx.select %m, %a, %b : vector<16xi1>, vector<16xf32>
%e = llvmx.extractelement %v[%c3 : i64] : vector<16xf32> -> f32
%g = llvmx.masked_gather %p[%offsets], %m, %pass {alignment = 4 : i32, elem_type = f32} : (!llvm.ptr, vector<16xi64>, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
```
"""

from __future__ import annotations

from typing import ClassVar

from tilecraft.utils.attrs import integer_attr
from xdsl.dialects.builtin import (
    I32,
    AnyFloatConstr,
    IntegerAttr,
    IntegerType,
    SignlessIntegerConstraint,
    StringAttr,
    VectorType,
    i1,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException

UNROLL_FULL = "llvmx.unroll_full"  # on a loop's back edge: LLVM unrolls it fully
# On a loop's back edge: LLVM does not unroll it by a factor its trip count, known
# only when it runs, may not divide (the remainder loops O3 makes of a register
# tile's reduction multiplied its compile time by 7 and bought no speed).
NO_RUNTIME_UNROLL = "llvmx.no_runtime_unroll"

FCMP_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def _lanes(t: Attribute) -> int | None:
    return t.get_shape()[0] if isinstance(t, VectorType) else None


class _CastOp(IRDLOperation):
    """A cast `%r = llvmx.<name> %x : <from> to <to>` between scalars or vectors."""

    arg = operand_def()
    res = result_def()
    traits = traits_def(NoMemoryEffect())
    assembly_format = "$arg attr-dict `:` type($arg) `to` type($res)"

    def __init__(self, arg: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[arg], result_types=[result_type])

    def verify_(self) -> None:
        if _lanes(self.arg.type) != _lanes(self.res.type):
            raise VerifyException(
                f"{self.name} must cast a scalar to a scalar or a vector to a "
                "vector of the same length."
            )


@irdl_op_definition
class FPToSIOp(_CastOp):
    name = "llvmx.fptosi"


@irdl_op_definition
class FPToUIOp(_CastOp):
    name = "llvmx.fptoui"


@irdl_op_definition
class UIToFPOp(_CastOp):
    name = "llvmx.uitofp"


@irdl_op_definition
class AddrSpaceCastOp(_CastOp):
    """A pointer into one address space as a pointer into another:
    `%p = llvmx.addrspacecast %shared : !llvm.ptr<3> to !llvm.ptr` (a GPU kernel's
    shared buffer, addressed through the generic pointers the loop lowering uses)."""

    name = "llvmx.addrspacecast"

    def verify_(self) -> None:
        if not (isinstance(self.arg.type, LLVMPointerType) and isinstance(self.res.type, LLVMPointerType)):
            raise VerifyException("llvmx.addrspacecast casts an !llvm.ptr to an !llvm.ptr of another address space.")


@irdl_op_definition
class FCmpOp(IRDLOperation):
    """`%m = llvmx.fcmp "olt" %a, %b : vector<8xf32> -> vector<8xi1>`: lane-wise float compare."""

    name = "llvmx.fcmp"
    T: ClassVar = VarConstraint("T", AnyFloatConstr | VectorType.constr(AnyFloatConstr))
    predicate = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def()
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($res)"

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue):
        lanes = _lanes(lhs.type)
        result_type = i1 if lanes is None else VectorType(i1, [lanes])
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result_type],
            properties={"predicate": StringAttr(predicate)},
        )

    def verify_(self) -> None:
        if self.predicate.data not in FCMP_PREDICATES:
            raise VerifyException(
                f"llvmx.fcmp predicate must be one of {', '.join(FCMP_PREDICATES)}, "
                f"not '{self.predicate.data}'."
            )


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`%r = llvmx.select %m, %a, %b : vector<8xi1>, vector<8xf32>`: lane-wise select."""

    name = "llvmx.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(VectorType[IntegerType])
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        if _lanes(self.cond.type) != _lanes(self.lhs.type):
            raise VerifyException("llvmx.select needs as many condition lanes as value lanes.")


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """`%e = llvmx.extractelement %v[%i : i64] : vector<8xf32> -> f32`."""

    name = "llvmx.extractelement"
    vector = operand_def(VectorType)
    index = operand_def(SignlessIntegerConstraint)
    res = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$vector `[` $index `:` type($index) `]` attr-dict `:` type($vector) `->` type($res)"
    )

    def __init__(self, vector: SSAValue, index: SSAValue):
        assert isinstance(vector.type, VectorType)
        super().__init__(operands=[vector, index], result_types=[vector.type.element_type])


class _MaskedMemoryOp(IRDLOperation):
    """Common parts of the masked memory ops: a vector<Nxi1> mask and an alignment."""

    alignment = prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)

    def _check_mask(self, mask: SSAValue, value_type: Attribute) -> None:
        if _lanes(mask.type) != _lanes(value_type):
            raise VerifyException(f"{self.name} needs a mask with one lane per value lane.")


@irdl_op_definition
class MaskedLoadOp(_MaskedMemoryOp):
    """`%v = llvmx.masked_load %p, %m, %pass {alignment = 4 : i32} : ...`: lanes
    whose mask is false are not read and take `%pass`'s value."""

    name = "llvmx.masked_load"
    ptr = operand_def(LLVMPointerType)
    mask = operand_def(VectorType[IntegerType])
    passthru = operand_def(VectorType)
    res = result_def(VectorType)
    assembly_format = (
        "$ptr `,` $mask `,` $passthru attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, ptr: SSAValue, mask: SSAValue, passthru: SSAValue, alignment: int):
        super().__init__(
            operands=[ptr, mask, passthru],
            result_types=[passthru.type],
            properties={"alignment": integer_attr(alignment, 32)},
        )

    def verify_(self) -> None:
        self._check_mask(self.mask, self.res.type)


@irdl_op_definition
class MaskedStoreOp(_MaskedMemoryOp):
    """`llvmx.masked_store %v, %p, %m {alignment = 4 : i32} : ...`: only lanes whose
    mask is true are written."""

    name = "llvmx.masked_store"
    value = operand_def(VectorType)
    ptr = operand_def(LLVMPointerType)
    mask = operand_def(VectorType[IntegerType])
    assembly_format = (
        "$value `,` $ptr `,` $mask attr-dict `:` type($value) `,` type($ptr) `,` type($mask)"
    )

    def __init__(self, value: SSAValue, ptr: SSAValue, mask: SSAValue, alignment: int):
        super().__init__(
            operands=[value, ptr, mask],
            properties={"alignment": integer_attr(alignment, 32)},
        )

    def verify_(self) -> None:
        self._check_mask(self.mask, self.value.type)


@irdl_op_definition
class MaskedGatherOp(_MaskedMemoryOp):
    """`%v = llvmx.masked_gather %base[%offsets], %m, %pass {elem_type = f32, ...}`:
    lane i reads `base[offsets[i]]` (in elements of `elem_type`) where `%m` holds."""

    name = "llvmx.masked_gather"
    elem_type = prop_def()
    base = operand_def(LLVMPointerType)
    offsets = operand_def(VectorType[IntegerType])
    mask = operand_def(VectorType[IntegerType])
    passthru = operand_def(VectorType)
    res = result_def(VectorType)
    assembly_format = (
        "$base `[` $offsets `]` `,` $mask `,` $passthru attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        base: SSAValue,
        offsets: SSAValue,
        mask: SSAValue,
        passthru: SSAValue,
        elem_type: Attribute,
        alignment: int,
    ):
        super().__init__(
            operands=[base, offsets, mask, passthru],
            result_types=[passthru.type],
            properties={
                "alignment": integer_attr(alignment, 32),
                "elem_type": elem_type,
            },
        )

    def verify_(self) -> None:
        self._check_mask(self.mask, self.res.type)
        self._check_mask(self.offsets, self.res.type)


@irdl_op_definition
class MaskedScatterOp(_MaskedMemoryOp):
    """`llvmx.masked_scatter %v, %base[%offsets], %m {elem_type = f32, ...}`: lane i
    writes `base[offsets[i]]` where `%m` holds, in lane order (the last lane wins)."""

    name = "llvmx.masked_scatter"
    elem_type = prop_def()
    value = operand_def(VectorType)
    base = operand_def(LLVMPointerType)
    offsets = operand_def(VectorType[IntegerType])
    mask = operand_def(VectorType[IntegerType])
    assembly_format = (
        "$value `,` $base `[` $offsets `]` `,` $mask attr-dict `:` "
        "type($value) `,` type($base) `,` type($offsets) `,` type($mask)"
    )

    def __init__(
        self,
        value: SSAValue,
        base: SSAValue,
        offsets: SSAValue,
        mask: SSAValue,
        elem_type: Attribute,
        alignment: int,
    ):
        super().__init__(
            operands=[value, base, offsets, mask],
            properties={
                "alignment": integer_attr(alignment, 32),
                "elem_type": elem_type,
            },
        )

    def verify_(self) -> None:
        self._check_mask(self.mask, self.value.type)
        self._check_mask(self.offsets, self.value.type)


LLVMX = Dialect(
    "llvmx",
    [
        FPToSIOp,
        FPToUIOp,
        UIToFPOp,
        AddrSpaceCastOp,
        FCmpOp,
        SelectOp,
        ExtractElementOp,
        MaskedLoadOp,
        MaskedStoreOp,
        MaskedGatherOp,
        MaskedScatterOp,
    ],
    [],
)
