"""`convert-loop-to-llvm` patterns for functions, calls, constants and
arithmetic: `func.func`, `func.return`, `func.call`, `arith.constant` and every
`arith`/`math` op of `HANDLERS` (`backends/llvm/ops.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from tilecraft.backends.llvm.builder import FunctionBuilder, scalar_type
from tilecraft.backends.llvm.memory import element_bytes
from tilecraft.lowering.convert_loop_to_llvm.state import Conversion, expanded, replace_with
from tilecraft.utils.dtypes import NARROW_FLOATS, numpy_dtype
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


# Functions --------------------------------------------------------------------


@dataclass
class FuncLowering(RewritePattern):
    """`func.func @f(%A: memref<..>)` → `llvm.func @f(%A: !llvm.ptr {noalias ...})`
    with a prologue block that branches to the old body. A memref with `?`
    dimensions is its pointer followed by one i64 per `?`, in order (a compact
    descriptor: buffers are contiguous, so the sizes give the strides)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        inputs: list[Attribute] = []
        attrs: list[dict[str, Attribute]] = []
        for i, t in enumerate(op.function_type.inputs.data):
            arg: dict[str, Attribute] = {}
            dynamic = _dynamic_dims(t)
            if isinstance(t, MemRefType):
                size = element_bytes(t.element_type)
                arg = {
                    "llvm.noalias": UnitAttr(),
                    "llvm.nonnull": UnitAttr(),
                    "llvm.align": IntegerAttr(size, i64),
                }
                if not dynamic:
                    arg["llvm.dereferenceable"] = IntegerAttr(size * prod(t.get_shape()), i64)
            if op.arg_attrs is not None:
                for key in ("tc.name", "tc.weight", "tc.dims"):
                    if key in op.arg_attrs.data[i].data:
                        arg[key] = op.arg_attrs.data[i].data[key]
            inputs.append(scalar_type(t))
            attrs.append(arg)
            inputs.extend([i64] * dynamic)  # the sizes of its `?` dimensions
            attrs.extend({} for _ in range(dynamic))
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        function = self.state.define(
            op.sym_name.data, inputs, "internal" if private else "external", attrs
        )
        body = op.body.detach_block(op.body.block)
        builder = FunctionBuilder(function, body)
        new_args = iter(builder.args)
        for old in body.args:
            new = next(new_args)
            new.name_hint = old.name_hint
            sizes = [next(new_args) for _ in range(_dynamic_dims(old.type))]
            for n, size in enumerate(sizes):
                size.name_hint = f"{old.name_hint or 'arg'}_size{n}"
            old.replace_all_uses_with(
                self.state.as_memref(new, old.type, body, sizes)
                if isinstance(old.type, MemRefType)
                else new
            )
        for old in reversed(body.args):
            body.erase_arg(old)
        self.state.builders[function] = builder
        rewriter.replace(op, function)


@dataclass
class ReturnLowering(RewritePattern):
    """`func.return` → `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.ReturnOp())


@dataclass
class CallLowering(RewritePattern):
    """`func.call @k(%A, %B)` → `llvm.call @k(%A, %B)` (pointers, each followed by
    the sizes of its `?` dimensions)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        b.call(op.callee.root_reference.data, [v for a in op.arguments for v in expanded(a)])
        rewriter.erase(op)


def _dynamic_dims(t: Attribute) -> int:
    """How many `?` sizes an argument of type `t` carries after its pointer."""
    return sum(d < 0 for d in t.get_shape()) if isinstance(t, MemRefType) else 0


@dataclass
class ConstantLowering(RewritePattern):
    """`arith.constant` → one `llvm.mlir.constant` per value in the prologue."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        value = op.value
        b = self.state.builder(op)
        if isinstance(value, DenseIntOrFPElementsAttr):
            lanes = [int(v) if isinstance(v, bool) else v for v in value.get_values()]
            lanes = [_held(v, op.result.type) for v in lanes]
            vector_type = scalar_type(op.result.type)
            if all(v == lanes[0] for v in lanes):
                result = b.const(lanes[0], vector_type)
            else:
                result = b.const_vector(lanes, vector_type)  # type: ignore[arg-type]
            replace_with(rewriter, op, [result])
            return
        assert isinstance(value, IntegerAttr | FloatAttr)
        held = _held(value.value.data, op.result.type)
        replace_with(rewriter, op, [b.const(held, scalar_type(op.result.type))])


def _held(value: int | float, t: Attribute) -> int | float:
    """A constant as LLVM holds it: a bf16/float8/float4 one as its bits (the
    integer `scalar_type` gives those types)."""
    element = t.element_type if isinstance(t, VectorType) else t
    if type(element) not in NARROW_FLOATS:
        return value
    narrow = np.array(value, dtype=numpy_dtype(element))
    return int(narrow.view(f"uint{8 * narrow.itemsize}"))


@dataclass
class ArithMathLowering(RewritePattern):
    """An `arith`/`math` op → its LLVM instructions (`HANDLERS[type(op)]`, or
    the conversion's own table)."""

    state: Conversion

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        handler = self.state.handlers.get(type(op))
        if handler is None:
            return
        b = self.state.builder(op)
        result = op.results[0]
        value = handler(self.state.op_lowering(b), op, list(op.operands), scalar_type(result.type))
        replace_with(rewriter, op, [value])
