"""The import driver: walks an ONNX graph in order and builds one `func.func @main`.

Values. Every ONNX tensor name is bound to either an SSA value or a numpy array.
Arrays are what the model knows before it runs: initializers, `Constant` nodes,
`Shape` of a static tensor, and anything computed only from those (folded here with
numpy, see `fold.py`). They become IR only when an op needs them as an operand
(`Node.input`), so a shape that only feeds `Reshape` never shows up as a tensor, and
the weight store holds only arrays the IR refers to. Arrays of at most
`INLINE_LIMIT` elements are inline `graph.constant`s; larger ones are
`graph.weight "name"` with the initializer's (or constant's) own name.

Converters. One function per ONNX operator, registered with `@converter`, takes a
`Node` and returns the node's outputs (SSA values or arrays). `Node` gives them what
they need and keeps the error messages uniform: `node.const(i, "shape")` for inputs
that must be known at import time, `node.attr(...)` which also records which
attributes were understood: an attribute no converter read is an error rather than
silently ignored, since dropping one would change what the model computes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    FunctionType,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from tilecraft.dialects import graph
from tilecraft.dialects.graph.shapes import tensor
from tilecraft.utils.diagnostics import OpError, verify_module
from tilecraft.utils.dtypes import numpy_dtype
from tilecraft.utils.names import name_hint
from tilecraft.utils.symbolic import SymExpr
from tilecraft.utils.weights import WeightStore, attach

MIN_OPSET = 13
INLINE_LIMIT = 16  # elements; larger constants go to the weight store


def onnx_type_name(elem_type: int) -> str:
    return onnx.TensorProto.DataType.Name(elem_type).lower()


# ONNX element types tilecraft computes in (and, below, those it holds widened).
ONNX_TYPES: dict[int, tuple[Attribute, type]] = {
    onnx.TensorProto.FLOAT: (f32, np.float32),
    onnx.TensorProto.INT64: (i64, np.int64),
    onnx.TensorProto.INT32: (i32, np.int32),
    onnx.TensorProto.BOOL: (i1, np.bool_),
    onnx.TensorProto.DOUBLE: (f64, np.float64),
    onnx.TensorProto.FLOAT16: (f16, np.float16),
    onnx.TensorProto.INT8: (i8, np.int8),
    onnx.TensorProto.INT16: (i16, np.int16),
}
# Unsigned integers. A graph input or output keeps its unsigned type (`ui8`: the
# caller passes uint8 arrays); inside, every uintN tensor is held exactly in the
# next wider signed type (uint8 in i16, uint16 in i32, uint32 in i64), where
# comparison, division, mod, max and casts need no unsigned variants, and every
# node that makes one is followed by a wrap to N bits (`x & (2^N - 1)`: uint8
# 200 + 100 is 44, as numpy). uint64 has no wider type: it is held as its bits in
# i64, and the ops whose meaning depends on the sign get unsigned forms (uint64.py).
UNSIGNED: dict[int, tuple[Attribute, Attribute, type]] = {
    onnx.TensorProto.UINT8: (IntegerType(8, Signedness.UNSIGNED), i16, np.uint8),
    onnx.TensorProto.UINT16: (IntegerType(16, Signedness.UNSIGNED), i32, np.uint16),
    onnx.TensorProto.UINT32: (IntegerType(32, Signedness.UNSIGNED), i64, np.uint32),
    onnx.TensorProto.UINT64: (IntegerType(64, Signedness.UNSIGNED), i64, np.uint64),
}
ONNX_TYPES.update({t: (wide, dtype) for t, (_, wide, dtype) in UNSIGNED.items()})
# Narrow types (ml_dtypes' arrays at the ports), the same way: a port keeps its type,
# inside a tensor is held exactly in float32 (bfloat16, float8, float4) or int8
# (int4, uint4, int2, uint2), and every node that makes one is followed by a
# rounding to it and back (`x.astype(bfloat16).astype(float32)`, a cast pair whose
# conversions frontends/te/narrow.py compiles), so each node's result is what the
# type can hold, as in ONNX's reference.
TP = onnx.TensorProto
NARROW: dict[int, tuple[Attribute, Attribute, np.dtype]] = {
    TP.BFLOAT16: (BFloat16Type(), f32, np.dtype(ml_dtypes.bfloat16)),
    TP.FLOAT8E4M3FN: (Float8E4M3FNType(), f32, np.dtype(ml_dtypes.float8_e4m3fn)),
    TP.FLOAT8E4M3FNUZ: (Float8E4M3FNUZType(), f32, np.dtype(ml_dtypes.float8_e4m3fnuz)),
    TP.FLOAT8E5M2: (Float8E5M2Type(), f32, np.dtype(ml_dtypes.float8_e5m2)),
    TP.FLOAT8E5M2FNUZ: (Float8E5M2FNUZType(), f32, np.dtype(ml_dtypes.float8_e5m2fnuz)),
    TP.FLOAT8E8M0: (Float8E8M0FNUType(), f32, np.dtype(ml_dtypes.float8_e8m0fnu)),
    TP.FLOAT4E2M1: (Float4E2M1FNType(), f32, np.dtype(ml_dtypes.float4_e2m1fn)),
    TP.INT4: (IntegerType(4), i8, np.dtype(ml_dtypes.int4)),
    TP.UINT4: (IntegerType(4, Signedness.UNSIGNED), i8, np.dtype(ml_dtypes.uint4)),
    TP.INT2: (IntegerType(2), i8, np.dtype(ml_dtypes.int2)),
    TP.UINT2: (IntegerType(2, Signedness.UNSIGNED), i8, np.dtype(ml_dtypes.uint2)),
}
# The float8 types ONNX's Cast saturates to (attribute `saturate`, default 1): their
# largest finite value.
SATURATING: dict[int, float] = {
    t: float(ml_dtypes.finfo(NARROW[t][2]).max)
    for t in (TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ)
}
NARROW_OF_DTYPE: dict[np.dtype, int] = {dtype: t for t, (_, _, dtype) in NARROW.items()}
ONNX_TYPES.update({t: (wide, dtype.type) for t, (_, wide, dtype) in NARROW.items()})
SUPPORTED_TYPES = ", ".join(onnx_type_name(t) for t in ONNX_TYPES)
UNSIGNED_BITS: dict[type, int] = {np.uint8: 8, np.uint16: 16, np.uint32: 32, np.uint64: 64}
WIDE_OF_BITS: dict[int, Attribute] = {8: i16, 16: i32, 32: i64, 64: i64}
NUMPY_TYPES: dict[np.dtype, Attribute] = {np.dtype(n): t for t, n in ONNX_TYPES.values()}

Value = SSAValue | np.ndarray
Converter = Callable[["Node"], Sequence[Value]]
CONVERTERS: dict[str, Converter] = {}


class OnnxImportError(Exception):
    """A model tilecraft cannot import; the message names the operator and node."""


class ConstantInputNeeded(OnnxImportError):
    """A node needs tensor `tensor` at import time (a shape, axes, pads...) but the
    model computes it at run time. A caller that knows the values of graph inputs
    before compiling (the ONNX backend, at `run`) can freeze the graph inputs it
    depends on (`frontends/onnx/freeze.py`) and import again."""

    def __init__(self, message: str, tensor: str):
        super().__init__(message)
        self.tensor = tensor


def converter(*op_types: str) -> Callable[[Converter], Converter]:
    """Register a function as the converter of these ONNX operator types."""

    def register(fn: Converter) -> Converter:
        for t in op_types:
            CONVERTERS[t] = fn
        return fn

    return register


def name_value(value: SSAValue, onnx_name: str) -> None:
    """Print the value under its ONNX name (made a valid SSA name), if it has none yet,
    so the IR reads like the model."""
    if value.name_hint is None and onnx_name:
        value.name_hint = name_hint(onnx_name)


class Node:
    """One ONNX node being converted: its inputs, attributes, and a builder."""

    def __init__(self, importer: Importer, proto: onnx.NodeProto, index: int):
        self.importer = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or (proto.output[0] if proto.output else f"#{index}")
        self.attrs: dict[str, Any] = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.read: set[str] = set()

    # errors --------------------------------------------------------------------------
    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"ONNX operator '{self.op_type}' (node '{self.name}'): {message}")

    # attributes ----------------------------------------------------------------------
    def attr(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        value = self.attrs.get(key, default)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list):
            return [v.decode() if isinstance(v, bytes) else v for v in value]
        return value

    def axis_attr(self, rank: int, default: int = -1) -> int:
        """Attribute `axis` in [-rank, rank), made non-negative."""
        axis = int(self.attr("axis", default))
        if not -rank <= axis < rank:
            raise self.error(f"axis {axis} is out of range for rank {rank}")
        return axis % rank

    def ignore(self, *keys: str) -> None:
        """Attributes that do not change inference results (seeds, momentum...)."""
        self.read.update(keys)

    def unread_attributes(self) -> list[str]:
        return [k for k in self.attrs if k not in self.read]

    # inputs --------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.proto.input)

    def has_input(self, i: int) -> bool:
        return i < len(self.proto.input) and self.proto.input[i] != ""

    def raw(self, i: int) -> Value:
        """Input `i` as bound: an SSA value or a known array."""
        return self.importer.lookup(self.proto.input[i])

    def input(self, i: int) -> SSAValue:
        """Input `i` as an SSA value (a known array becomes a constant or weight)."""
        try:
            return self.importer.value(self.proto.input[i])
        except OnnxImportError as e:
            raise self.error(str(e)) from None

    def inputs(self) -> list[SSAValue]:
        return [self.input(i) for i in range(self.num_inputs) if self.has_input(i)]

    def const(self, i: int, what: str) -> np.ndarray:
        """Input `i`, which tilecraft needs at import time (a shape, axes, pads...)."""
        v = self.raw(i)
        if not isinstance(v, np.ndarray):
            message = str(self.error(
                f"input {i} ({what}) must be a constant (an initializer or computed from "
                "constants and shapes); tilecraft needs it at import time"
            ))  # fmt: skip
            raise ConstantInputNeeded(message, self.proto.input[i])
        return v

    def optional_const(self, i: int, what: str) -> np.ndarray | None:
        return self.const(i, what) if self.has_input(i) else None

    def is_const(self, i: int) -> bool:
        return self.has_input(i) and isinstance(self.raw(i), np.ndarray)

    def shape(self, i: int) -> tuple[int, ...]:
        v = self.raw(i)
        return tuple(v.shape) if isinstance(v, np.ndarray) else graph.shape_of(v.type)

    def element_type(self, i: int) -> Attribute:
        v = self.raw(i)
        if isinstance(v, np.ndarray):
            return self.importer.element_type_of(v)
        return graph.ranked(v.type).get_element_type()

    # building ------------------------------------------------------------------------
    def emit_op(self, cls: type[graph.GraphOp], inputs: Sequence[SSAValue], **attributes: Any) -> graph.GraphOp:
        try:
            op = cls(inputs, attributes)
        except graph.ShapeError as e:
            raise self.error(f"{e} (while building {cls.name})") from None
        self.importer.block.add_op(op)
        return op

    def emit(self, cls: type[graph.GraphOp], inputs: Sequence[SSAValue], **attributes: Any) -> SSAValue:
        """Build a one-result graph op, inferring its type; returns the result."""
        return self.emit_op(cls, inputs, **attributes).results[0]

    def constant(self, array: np.ndarray, hint: str) -> SSAValue:
        """A derived array (a transposed weight, a scalar) as a constant or weight."""
        return self.importer.materialize(np.asarray(array), hint)

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type (for x * alpha, 1 / x...)."""
        element = graph.ranked(like.type).get_element_type()
        dtype = next(n for t, n in ONNX_TYPES.values() if t == element)
        return self.constant(np.array(value, dtype=dtype), "scalar")


def upgrade_opset(model: onnx.ModelProto, version: int) -> onnx.ModelProto:
    """`model` (default-domain opset `version` < MIN_OPSET) converted to MIN_OPSET by
    onnx's version converter, the adapters ONNX keeps for every operator change.
    The converter is given the model without its weights' data (`skeleton`): it
    copies every byte it is given, twice, and reads no floating-point weight."""
    from onnx import version_converter

    from tilecraft.frontends.onnx.skeleton import restore, skeleton

    try:
        shape, weights = skeleton(model)
        return restore(version_converter.convert_version(shape, MIN_OPSET), weights)
    except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError/ValueError/...
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        reason = re.sub(r"^\S+\.h:\d+: \w+: ", "", reason)  # the C++ adapter's file:line
        raise OnnxImportError(
            f"ONNX opset {version} model could not be converted to opset {MIN_OPSET} "
            f"(tilecraft imports opset {MIN_OPSET}+ and converts older models with "
            f"onnx.version_converter): {reason}"
        ) from None


def _size_name(declared, input_name: str, k: int) -> str:
    """A size's name: its ONNX `dim_param` as an identifier, else (anonymous, `?`)
    `<input>_<dimension>`."""
    text = declared if isinstance(declared, str) and declared not in ("", "?") else f"{input_name}_{k}"
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name and not name[0].isdigit() and name not in ("floordiv", "mod", "ceildiv") else f"d_{name}"


class Importer:
    def __init__(self, model: onnx.ModelProto, input_shapes: dict[str, Sequence[int]]):
        self.model = model
        self.input_shapes = {k: tuple(int(d) for d in v) for k, v in input_shapes.items()}
        self.dynamic_inputs: dict[str, list] = {}  # input -> its declared dims, where some are not static
        self.env: dict[str, Value] = {}
        self.materialized: dict[int, SSAValue] = {}  # id(array) -> its SSA value
        self.unsigned: dict[SSAValue, int] = {}  # values holding uintN tensors widened: N
        self.narrow_types: dict[SSAValue, int] = {}  # values holding narrow tensors widened: the type
        self.narrowed: dict[SSAValue, SSAValue] = {}  # such a value -> the narrow one it extends
        self.keep_alive: list[np.ndarray] = []  # arrays whose ids key `materialized`
        self.store = WeightStore()
        self.block = Block()
        self.opset = self.check_opset()

    # opsets and signature ------------------------------------------------------------
    def check_opset(self) -> int:
        versions = {o.domain: o.version for o in self.model.opset_import}
        version = versions.get("", versions.get("ai.onnx"))
        if version is None:
            if not self.model.HasField("graph"):
                raise OnnxImportError("the model has no graph and imports no ONNX opset: is it an ONNX model?")
            raise OnnxImportError("the model imports no default ONNX opset")
        self.source_opset = version  # before any conversion (Dropout's mask type changed at 10)
        if version < MIN_OPSET:
            self.model = upgrade_opset(self.model, version)
            return MIN_OPSET
        return version

    def input_type(self, vi: onnx.ValueInfoProto) -> TensorType:
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise OnnxImportError(f"graph input '{vi.name}' is not a tensor")
        if tt.elem_type not in ONNX_TYPES:
            raise OnnxImportError(
                f"graph input '{vi.name}' has element type {onnx_type_name(tt.elem_type)}; "
                f"tilecraft supports {SUPPORTED_TYPES}"
            )
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        if not tt.HasField("shape") and vi.name not in self.input_shapes:
            # Not a scalar: ONNX leaves the rank unknown. The caller must say it.
            raise OnnxImportError(
                f"graph input '{vi.name}' has no shape (not even a rank); give it with "
                f"input_shapes={{'{vi.name}': (...)}} or the tools' --input-shape {vi.name}=D1xD2x..."
            )
        if not tt.HasField("shape"):
            dims = ["?"] * len(self.input_shapes[vi.name])
        if vi.name in self.input_shapes:
            fixed = self.input_shapes[vi.name]
            if len(fixed) != len(dims) or any(isinstance(d, int) and d != f for d, f in zip(dims, fixed)):
                raise OnnxImportError(
                    f"the shape {fixed} given for input '{vi.name}' does not fit its declared "
                    f"shape ({', '.join(map(str, dims))})"
                )
            dims = list(fixed)
        ports = {**{t: port for t, (port, _, _) in UNSIGNED.items()}, **{t: port for t, (port, _, _) in NARROW.items()}}
        element = ports.get(tt.elem_type, ONNX_TYPES[tt.elem_type][0])
        if any(not isinstance(d, int) or d < 0 for d in dims):
            # Sizes known when the model runs: a `dim_param` keeps its name (two
            # inputs with one name have one size), an anonymous one gets its own.
            sizes = [d if isinstance(d, int) and d >= 0 else SymExpr.lift(_size_name(d, vi.name, k))
                     for k, d in enumerate(dims)]  # fmt: skip
            self.dynamic_inputs[vi.name] = dims
            return tensor(sizes, element)
        return TensorType(element, dims)

    def _with_shape_hint(self, error: OnnxImportError) -> OnnxImportError:
        """`error`, where an op does not take the sizes known only when the model
        runs yet, with how to compile the model for one shape instead."""
        if not self.dynamic_inputs or "symbolic" not in str(error):
            return error
        given = ", ".join(
            f"'{name}': ({', '.join(str(d) if isinstance(d, int) and d > 0 else '1' for d in dims)}"
            f"{',' if len(dims) == 1 else ''})"
            for name, dims in self.dynamic_inputs.items()
        )
        flags = " ".join(
            f"--input-shape {name}={'x'.join(str(d) if isinstance(d, int) and d > 0 else '1' for d in dims)}"
            for name, dims in self.dynamic_inputs.items()
        )
        return OnnxImportError(
            f"{error}; to compile the model for one shape, give input_shapes={{{given}}} (the tools' {flags})"
        )

    # values ----------------------------------------------------------------------------
    def lookup(self, name: str) -> Value:
        if name not in self.env:
            raise OnnxImportError(f"tensor '{name}' is used before it is defined")
        return self.env[name]

    def value(self, name: str) -> SSAValue:
        v = self.lookup(name)
        return self.materialize(v, name) if isinstance(v, np.ndarray) else v

    def element_type_of(self, array: np.ndarray) -> Attribute:
        if array.dtype not in NUMPY_TYPES:
            raise OnnxImportError(f"constant of element type {array.dtype} is not supported")
        return NUMPY_TYPES[array.dtype]

    def materialize(self, array: np.ndarray, hint: str) -> SSAValue:
        """The SSA value of a known array: built once, inline if small."""
        if id(array) in self.materialized:
            return self.materialized[id(array)]
        key = id(array)
        element = self.element_type_of(array)
        bits = UNSIGNED_BITS.get(array.dtype.type)
        narrow = NARROW_OF_DTYPE.get(array.dtype)
        if bits is not None or narrow is not None:
            array = array.astype(numpy_dtype(element))  # exact in the wider type
        type_ = TensorType(element, list(array.shape))
        if array.size <= INLINE_LIMIT:
            values = [float(v) for v in array.flat] if array.dtype.kind == "f" else [int(v) for v in array.flat]
            op = graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, values))
        else:
            op = graph.WeightOp(self.store.add(array, hint), type_)
        self.block.add_op(op)
        name_value(op.results[0], hint)
        self.materialized[key] = op.results[0]
        self.keep_alive.append(array)
        if bits is not None:
            self.unsigned[op.results[0]] = bits
        if narrow is not None:
            self.narrow_types[op.results[0]] = narrow
        return op.results[0]

    # the walk --------------------------------------------------------------------------
    def run(self) -> ModuleOp:
        g = self.model.graph
        for init in g.initializer:
            self.env[init.name] = self.initializer(init)
        initializers = {i.name for i in g.initializer}
        args = [vi for vi in g.input if vi.name not in initializers]
        names = [vi.name for vi in args]
        for name in names:
            if names.count(name) > 1:
                raise OnnxImportError(f"the graph has two inputs named '{name}'")
        unknown = [n for n in self.input_shapes if n not in names]
        if unknown:
            raise OnnxImportError(
                f"a shape is given for '{unknown[0]}', which is not an input of the model "
                f"(its inputs: {', '.join(names) or 'none'})"
            )
        types = [self.input_type(vi) for vi in args]
        for vi, t in zip(args, types):
            arg = self.block.insert_arg(t, len(self.block.args))
            name_value(arg, vi.name)
            self.env[vi.name] = self.widen(arg, vi.type.tensor_type.elem_type)
        for index, proto in enumerate(g.node):
            self.convert(Node(self, proto, index))
        if not g.output:
            raise OnnxImportError("the graph has no outputs, so the model computes nothing")
        results = []
        for vo in g.output:
            try:
                results.append(self.narrow(self.value(vo.name), vo))
            except OnnxImportError as e:
                raise OnnxImportError(f"graph output '{vo.name}': {e}") from None
        self.block.add_op(func.ReturnOp(*results))
        names = lambda vis: ArrayAttr([DictionaryAttr({"tc.name": StringAttr(v.name)}) for v in vis])  # noqa: E731
        main = func.FuncOp(
            "main",
            FunctionType.from_lists(types, [r.type for r in results]),
            Region(self.block),
            arg_attrs=names(args),
            res_attrs=names(g.output),
        )
        module = ModuleOp([main])
        try:
            verify_module(module)
        except OpError as e:  # a converter bug rather than a model error; still no traceback
            raise OnnxImportError(f"the imported IR does not verify: {e.message}") from None
        attach(module, self.store)
        return module

    # unsigned integers (see UNSIGNED) -------------------------------------------------
    def widen(self, arg: SSAValue, elem_type: int) -> SSAValue:
        """A graph input of an unsigned type as its exact value in the wider type."""
        if elem_type in NARROW:
            op = graph.CastOp([arg], {"to": NARROW[elem_type][1]})
            self.block.add_op(op)
            self.narrow_types[op.results[0]] = elem_type
            self.narrowed[op.results[0]] = arg
            return op.results[0]
        if elem_type not in UNSIGNED:
            return arg
        _, wide, _ = UNSIGNED[elem_type]
        op = graph.CastOp([arg], {"to": wide})
        self.block.add_op(op)
        self.unsigned[op.results[0]] = UNSIGNED_BITS[UNSIGNED[elem_type][2]]
        return op.results[0]

    def narrow(self, value: SSAValue, vo: onnx.ValueInfoProto) -> SSAValue:
        """A graph output back in its unsigned type (the caller gets uintN arrays)."""
        elem_type = vo.type.tensor_type.elem_type
        if elem_type in NARROW and self.narrow_types.get(value) == elem_type:
            if value in self.narrowed:
                return self.narrowed[value]
            op = graph.CastOp([value], {"to": NARROW[elem_type][0]})
            self.block.add_op(op)
            return op.results[0]
        if elem_type not in UNSIGNED or self.unsigned.get(value) is None:
            return value
        op = graph.CastOp([value], {"to": UNSIGNED[elem_type][0]})
        self.block.add_op(op)
        return op.results[0]

    def narrow_type_of(self, value: Value) -> int | None:
        """The narrow ONNX type (see NARROW) `value` holds widened, or None."""
        if isinstance(value, np.ndarray):
            return NARROW_OF_DTYPE.get(value.dtype)
        return self.narrow_types.get(value)

    def narrow_result_type(self, node: Node) -> int | None:
        """The narrow type of the node's results: a Cast's `to`, a CastLike's target,
        else that of its narrow inputs (DequantizeLinear's follows its scale)."""
        if node.op_type in ("Cast", "BitCast"):
            to = node.attrs.get("to")
            return to if to in NARROW else None
        if node.op_type == "CastLike":
            return self.narrow_type_of(node.raw(1)) if node.has_input(1) else None
        if node.op_type == "DequantizeLinear":
            return None
        for i in range(node.num_inputs):
            if node.has_input(i):
                narrow = self.narrow_type_of(node.raw(i))
                if narrow is not None:
                    return narrow
        return None

    def round(self, value: SSAValue, elem_type: int) -> SSAValue:
        """`value` rounded to the narrow type and widened back, where it is a tensor of
        the type that holds it and not such a value already."""
        port, wide, _ = NARROW[elem_type]
        if graph.ranked(value.type).get_element_type() != wide or value in self.narrow_types:
            return value
        if elem_type == TP.FLOAT8E8M0:
            raise OnnxImportError(
                "results of element type float8e8m0 are not supported (only inputs of it)"
            )
        narrow = graph.CastOp([value], {"to": port})
        back = graph.CastOp([narrow.results[0]], {"to": wide})
        self.block.add_ops([narrow, back])
        self.narrow_types[back.results[0]] = elem_type
        self.narrowed[back.results[0]] = narrow.results[0]
        return back.results[0]

    def unsigned_bits_of(self, value: Value) -> int | None:
        if isinstance(value, np.ndarray):
            return UNSIGNED_BITS.get(value.dtype.type)
        return self.unsigned.get(value)

    def unsigned_result_bits(self, node: Node) -> int | None:
        """N when the node's integer results are uintN tensors: a Cast to uintN, a
        CastLike of a uintN tensor, any other node with a uintN input."""
        if node.op_type in ("Cast", "BitCast"):
            to = node.attrs.get("to")
            return UNSIGNED_BITS[UNSIGNED[to][2]] if to in UNSIGNED else None
        if node.op_type == "CastLike":
            return self.unsigned_bits_of(node.raw(1)) if node.has_input(1) else None
        for i in range(node.num_inputs):
            if node.has_input(i):
                bits = self.unsigned_bits_of(node.raw(i))
                if bits is not None:
                    return bits
        return None

    def wrap(self, value: SSAValue, bits: int) -> SSAValue:
        """`value & (2^bits - 1)` where `value` is an integer tensor of the type that
        holds uint`bits` (a result of a node on uint`bits` tensors), else `value`."""
        element = graph.ranked(value.type).get_element_type()
        if element != WIDE_OF_BITS[bits] or self.unsigned.get(value) == bits:
            return value
        if bits == 64:  # all of int64's bits: nothing to wrap; a fresh value to mark
            if value not in self.unsigned:
                self.unsigned[value] = 64
                return value
            op = graph.CastOp([value], {"to": element})
        else:
            mask = self.materialize(np.array((1 << bits) - 1, dtype=numpy_dtype(element)), "mask")
            op = graph.BitwiseAndOp([value, mask], {})
        self.block.add_op(op)
        self.unsigned[op.results[0]] = bits
        return op.results[0]

    def initializer(self, init: onnx.TensorProto) -> np.ndarray:
        if init.data_location == onnx.TensorProto.EXTERNAL and not init.raw_data:
            raise OnnxImportError(
                f"initializer '{init.name}' is stored in an external file that was not "
                "loaded; pass the model's path so its external data is found"
            )
        return numpy_helper.to_array(init)

    def convert(self, node: Node) -> None:
        from tilecraft.frontends.onnx.fold import FOLDERS

        proto = node.proto
        for n, name in enumerate(proto.output):
            # ONNX graphs are in SSA form: a second writer of a name is an error,
            # not a silent replacement of the first value.
            if name and (name in self.env or name in proto.output[:n]):
                raise node.error(f"output '{name}' is already defined (each tensor name is written once)")
        if proto.domain not in ("", "ai.onnx"):
            raise node.error(f"operators of domain '{proto.domain}' are not supported")
        all_known = all(isinstance(self.lookup(n), np.ndarray) for n in proto.input if n)
        if all_known and proto.input and proto.op_type in FOLDERS:
            try:
                outputs = FOLDERS[proto.op_type](node, [self.lookup(n) if n else None for n in proto.input])
            except (ValueError, IndexError, TypeError) as e:  # numpy's complaint about bad operands
                raise node.error(f"cannot evaluate it on its constant inputs: {e}") from None
        elif proto.op_type in CONVERTERS:
            try:
                if any(n and self.unsigned_bits_of(self.lookup(n)) == 64 for n in proto.input):
                    from tilecraft.frontends.onnx import uint64

                    is_uint64 = lambda v: self.unsigned_bits_of(v) == 64  # noqa: E731
                    outputs = uint64.convert(node, CONVERTERS[proto.op_type], is_uint64)
                else:
                    outputs = CONVERTERS[proto.op_type](node)
            except OnnxImportError as e:
                raise self._with_shape_hint(e) from None
            except (ArithmeticError, LookupError, TypeError, ValueError, graph.ShapeError) as e:
                # Operands or attributes a converter did not anticipate: name the node
                # rather than leave the user a traceback into the converter.
                raise self._with_shape_hint(node.error(f"cannot convert it ({type(e).__name__}: {e})")) from None
        else:
            raise OnnxImportError(f"unsupported ONNX operator '{proto.op_type}' (node '{node.name}')")
        unread = node.unread_attributes()
        if unread:
            raise node.error(f"unsupported attribute '{unread[0]}'")
        if len(outputs) < len(proto.output) and any(proto.output[len(outputs) :]):
            raise node.error(f"output {len(outputs)} ('{proto.output[len(outputs)]}') is not supported")
        bits = self.unsigned_result_bits(node)
        narrow = self.narrow_result_type(node)
        for name, value in zip(proto.output, outputs):
            if name:
                if bits is not None and isinstance(value, SSAValue):
                    value = self.wrap(value, bits)
                if narrow is not None and isinstance(value, SSAValue):
                    try:
                        value = self.round(value, narrow)
                    except OnnxImportError as e:
                        raise node.error(str(e)) from None
                # numpy gives scalars (np.int64) for 0-d results; keep arrays only.
                self.env[name] = np.asarray(value) if isinstance(value, np.generic) else value
                if isinstance(value, SSAValue):
                    name_value(value, name)


def load_model(model_or_path: onnx.ModelProto | str | Path) -> onnx.ModelProto:
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    path = Path(model_or_path)
    if path.is_file() and path.stat().st_size == 0:
        raise OnnxImportError(f"cannot read '{path}' as an ONNX model: the file is empty")
    try:
        return onnx.load(str(path))
    except FileNotFoundError:
        raise OnnxImportError(f"cannot read '{path}': no such file") from None
    except IsADirectoryError:
        raise OnnxImportError(f"cannot read '{path}': it is a directory") from None
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(f"cannot read '{path}' as an ONNX model: {e}") from None


def from_onnx(
    model_or_path: onnx.ModelProto | str | Path,
    input_shapes: dict[str, Sequence[int]] | None = None,
) -> tuple[ModuleOp, WeightStore]:
    """Import an ONNX model as a graph-dialect module and its weights; a model of an
    opset before 13 is first converted by `onnx.version_converter`.

    `input_shapes` fixes dynamic input dimensions, e.g. `{"x": (1, 3, 224, 224)}`.
    The module holds `func.func @main`; the store is attached in memory
    (`utils.weights.attach`). Raises `OnnxImportError` for anything unsupported."""
    model = load_model(model_or_path)
    importer = Importer(model, input_shapes or {})
    module = importer.run()
    return module, importer.store
