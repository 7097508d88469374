"""The `graph` dialect: a model as a dataflow graph of tensor operators (Relay-like).

Each op takes and returns ranked tensors; its attributes follow ONNX's meaning
(NCHW convolutions, pads as [begin..., end...]). Every op

- declares its attributes as typed properties with their defaults
  (`strides = Ints(default=(1, 1), length=2)`, read as `op.strides`); the verifier
  rejects an unknown or misspelled attribute, naming it and the closest property;
- declares its fusion kind as a trait (`Injective`, `Broadcast`, `Reduction`,
  `ComplexOutFusable`, `Opaque`), which is all `fuse-ops` looks at;
- infers its result types from its operands (`infer`), which the verifier checks
  and `infer-shapes` applies, so a shape error is reported at the op.
- has canonicalization patterns (identities removed, batch_norm folded) and a
  folder (an op on constants computes its value), applied by xDSL's `canonicalize`
  and by `fold-constants`; their bodies live in transforms/.

```mlir
func.func @main(%x: tensor<1x3x32x32xf32> {tc.name = "x"}) -> tensor<1x8x32x32xf32> {
  %w = graph.weight "conv.weight" : tensor<8x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  %r = graph.relu %y : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  func.return %r : tensor<1x8x32x32xf32>
}
```

Weights do not bloat the text: `graph.weight "name"` refers to an array in a side
file (a `.npz` named by the module's `graph.weights` attribute, or a store held in
memory while compiling); small constants are inline `graph.constant`s.
A fused group (`graph.fused`) holds its ops in an isolated region.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import struct
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    i1,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SpacedOpaqueSyntaxAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrConstraint,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OptOperandDef,
    VarOperandDef,
    VerificationContext,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    IsolatedFromAbove,
    IsTerminator,
    OpTrait,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# -- fusion kinds ---------------------------------------------------------------


class FusionKind(OpTrait):
    """How an op may fuse (TVM's OpPatternKind); `RANK` orders them like TVM's enum."""

    RANK: ClassVar[int] = 8


class Injective(FusionKind):
    """Each output element depends on one input element per input (elementwise,
    reshape, transpose, pad, slice, gather...)."""

    RANK = 2


class Broadcast(FusionKind):
    """Elementwise over operands broadcast to a common shape."""

    RANK = 1


class Reduction(FusionKind):
    """Combines input elements along axes; takes injective producers."""

    RANK = 3


class ComplexOutFusable(FusionKind):
    """An anchor (conv2d, dense, matmul, pooling) whose elementwise consumers fuse in."""

    RANK = 4


class Opaque(FusionKind):
    """Runs alone (softmax, layer_norm, batch_norm before simplification)."""

    RANK = 8


def fusion_kind(op: Operation) -> type[FusionKind] | None:
    for kind in (Broadcast, Injective, Reduction, ComplexOutFusable, Opaque):
        if op.has_trait(kind):
            return kind
    return None


# -- canonicalization and folding --------------------------------------------------
# The pattern and folder bodies compute with numpy (the ops' meaning,
# graph_reference.py) and the weight store; they live in modules of their own
# beside this one (graph_canonicalization.py, graph_folders.py), imported when
# `canonicalize` first asks for them, not when this dialect loads.


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Identity removal and batch_norm folding, run by xDSL's `canonicalize`."""

    def get_patterns(self, op: type[Operation]):
        from tilecraft.dialects.graph_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls):
        from tilecraft.dialects.graph_canonicalization import all_patterns

        return all_patterns()


class GraphFolder(HasFolder):
    """An op on constants and weights folds to the values it computes."""

    @classmethod
    def fold(cls, op: Operation):
        from tilecraft.dialects.graph_folders import fold

        return fold(op)


class GraphConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become `graph.constant`s."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if isinstance(value, DenseIntOrFPElementsAttr) and value.type == type:
            return ConstantOp(value)
        return None


# -- shapes ---------------------------------------------------------------------


class ShapeError(Exception):
    """A shape or attribute that does not fit the op; reported at the op."""


def ranked(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ShapeError(f"expected a ranked tensor, got {t}")
    return t


def shape_of(t: Attribute) -> tuple[int, ...]:
    return tuple(ranked(t).get_shape())


def tensor(shape: Sequence[int], element: Attribute) -> TensorType:
    return TensorType(element, list(shape))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = {s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def pool_out(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int = 1, ceil: bool = False) -> int:
    if min(kernel, stride, dilation) < 1:
        raise ShapeError(f"window {kernel}, stride {stride} and dilation {dilation} must be positive")
    span = size + pad_lo + pad_hi - dilation * (kernel - 1) - 1
    if span < 0:
        raise ShapeError(f"window {kernel} (dilation {dilation}) does not fit input extent {size} with padding {pad_lo}+{pad_hi}")
    out = (-(-span // stride) if ceil else span // stride) + 1
    # With ceil_mode the last window must still start inside the input or the
    # leading padding (ONNX and PyTorch agree); otherwise it covers only padding.
    if ceil and (out - 1) * stride >= size + pad_lo:
        out -= 1
    return out


# -- typed properties -------------------------------------------------------------------
#
# Each graph op declares its attributes once, as typed accessors on the class:
#
#     strides = Ints(default=(1, 1), length=2)
#
# An accessor is a Python `property` giving the value (a tuple of ints here), or
# its default when the op does not spell it; `GraphOp.__init_subclass__` turns it
# into the IRDL property `strides_attr = opt_prop_def(DenseArrayBase.constr(i64),
# prop_name="strides")`, so xDSL knows its kind and the generic form carries it as
# `<{strides = array<i64: 2, 2>}>`. The custom form keeps properties in the
# `{...}` dictionary, as the ops printed before they were typed.
#
# Required properties are declared optional to IRDL too: the op's verifier
# (`GraphOp.verify_properties`) reports a missing, misspelled or ill-typed one by
# name, where a declarative format's parser would raise a nameless constraint
# error.
#
# Closed sets of words are enum attributes (`#graph<approximate tanh>`). Layouts
# stay strings ("NCHW16c", "OIHW4i16o"): they are a family with a block size
# parameter, not a closed set, and `layout_block` parses and checks them.


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED = _Required()


class Prop(property):
    """A typed op property: `op.<name>` is its Python value, or the default."""

    constraint: ClassVar[AttrConstraint]
    what: ClassVar[str]  # "an array of i64", for diagnostics

    def __init__(self, default: object = REQUIRED, doc: str | None = None):
        self.default = default
        self.name = ""
        super().__init__(self._get, doc=doc)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def _get(self, op: Operation):
        attr = op.properties.get(self.name)
        if attr is None:
            if self.required:
                raise ShapeError(f"{op.name} needs attribute '{self.name}'")
            return self.default(op) if callable(self.default) else self.default
        return self.value(attr)

    def value(self, attr: Attribute):
        raise NotImplementedError

    def to_attr(self, value: object) -> Attribute:
        """The property's attribute for a Python value (an Attribute passes through)."""
        raise NotImplementedError

    def check(self, op: Operation, attr: Attribute) -> None:
        """Raise a VerifyException naming the op and the property if `attr` is not
        of this property's kind."""
        try:
            self.constraint.verify(attr, VerificationContext())
        except VerifyException:
            raise VerifyException(f"{op.name} attribute '{self.name}' must be {self.what}, not {attr}.") from None


class Ints(Prop):
    """An `array<i64: ...>`; `length` is how many values it must have."""

    constraint = DenseArrayBase.constr(EqAttrConstraint(i64))
    what = "an array of i64 (array<i64: ...>)"

    def __init__(self, default: object = REQUIRED, length: int | None = None, doc: str | None = None):
        keep = default is None or default is REQUIRED or callable(default)  # callable: computed per op
        super().__init__(default if keep else tuple(default), doc)  # type: ignore[arg-type]
        self.length = length

    def value(self, attr: Attribute) -> tuple[int, ...]:
        assert isinstance(attr, DenseArrayBase)
        return tuple(int(v) for v in attr.get_values())

    def to_attr(self, value: object) -> Attribute:
        if isinstance(value, Attribute):
            return value
        return DenseArrayBase.from_list(i64, [int(v) for v in value])  # type: ignore[union-attr]

    def check(self, op: Operation, attr: Attribute) -> None:
        super().check(op, attr)
        n = len(self.value(attr))
        if self.length is not None and n != self.length:
            raise VerifyException(f"{op.name} attribute '{self.name}' needs {self.length} values, got {n}.")


class Int(Prop):
    constraint = IntegerAttr.constr(EqAttrConstraint(i64))
    what = "an i64 integer"

    def value(self, attr: Attribute) -> int:
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def to_attr(self, value: object) -> Attribute:
        return value if isinstance(value, Attribute) else IntegerAttr(int(value), i64)  # type: ignore[arg-type]


class Bool(Prop):
    constraint = IntegerAttr.constr(EqAttrConstraint(i1))
    what = "a boolean (true or false)"

    def value(self, attr: Attribute) -> bool:
        assert isinstance(attr, IntegerAttr)
        return bool(attr.value.data)

    def to_attr(self, value: object) -> Attribute:
        return value if isinstance(value, Attribute) else IntegerAttr(int(bool(value)), i1)


def _exact_in_f32(value: float) -> bool:
    if math.isnan(value) or math.isinf(value):
        return True
    try:
        return struct.unpack("f", struct.pack("f", value))[0] == value
    except OverflowError:  # beyond float32's range
        return False


class Float(Prop):
    """A float of any width; the value is a Python float."""

    constraint = BaseAttr(FloatAttr)
    what = "a float (like 1.0 : f32)"

    def value(self, attr: Attribute) -> float:
        assert isinstance(attr, FloatAttr)
        return float(attr.value.data)

    def to_attr(self, value: object) -> Attribute:
        if isinstance(value, Attribute):
            return value
        value = float(value)  # type: ignore[arg-type]
        # f32 when that holds the value exactly (as ONNX's float attributes), else f64:
        # a bound or constant of a float64 model must not be rounded to float32
        return FloatAttr(value, 32 if _exact_in_f32(value) else 64)


class Str(Prop):
    constraint = BaseAttr(StringAttr)
    what = "a string"

    def value(self, attr: Attribute) -> str:
        assert isinstance(attr, StringAttr)
        return attr.data

    def to_attr(self, value: object) -> Attribute:
        return value if isinstance(value, Attribute) else StringAttr(str(value))


class Type(Prop):
    """A type (`{to = f32}`); the value is the type attribute itself."""

    constraint = BaseAttr(TypeAttribute)
    what = "a type (like f32)"

    def value(self, attr: Attribute) -> Attribute:
        return attr

    def to_attr(self, value: object) -> Attribute:
        assert isinstance(value, Attribute)
        return value


class Enum(Prop):
    """One word of a closed set, stored as the EnumAttribute `attr`; the value is
    the StrEnum member (which compares equal to its string)."""

    what = ""

    def __init__(self, attr: type[EnumAttribute], default: object = REQUIRED, doc: str | None = None):
        super().__init__(default if default is REQUIRED else attr.enum_type(default), doc)
        self.attr = attr
        self.constraint = BaseAttr(attr)  # type: ignore[misc]
        self.what = f"one of {', '.join(str(e.value) for e in attr.enum_type)} (#graph<{attr.name.split('.')[-1]} ...>)"  # type: ignore[misc]

    def value(self, attr: Attribute):
        assert isinstance(attr, self.attr)
        return attr.data

    def to_attr(self, value: object) -> Attribute:
        return value if isinstance(value, Attribute) else self.attr(self.attr.enum_type(value))


class Approximate(StrEnum):
    """How graph.gelu computes Phi: exactly with erf, or with tanh."""

    NONE = "none"
    TANH = "tanh"


@irdl_attr_definition
class ApproximateAttr(EnumAttribute[Approximate], SpacedOpaqueSyntaxAttribute):
    """`#graph<approximate tanh>`"""

    name = "graph.approximate"


class WeightLayout(StrEnum):
    """How graph.dense stores its weight: [N, K] (ONNX Gemm with transB), [K, N], or
    NK64n: [N/64, K, 64], panels of 64 output columns, each K x 64 contiguous."""

    NK = "NK"
    KN = "KN"
    NK64n = "NK64n"


PANEL = 64  # the output columns of one NK64n panel


def dense_weight_nk(w: Sequence[int], layout: str) -> tuple[int, int] | None:
    """(N, K) of a dense weight of shape `w` in `layout`, or None if it has the
    wrong rank or panel width."""
    if layout == WeightLayout.NK64n:
        return (w[0] * PANEL, w[1]) if len(w) == 3 and w[2] == PANEL else None
    if len(w) != 2:
        return None
    return (w[0], w[1]) if layout == WeightLayout.NK else (w[1], w[0])


@irdl_attr_definition
class WeightLayoutAttr(EnumAttribute[WeightLayout], SpacedOpaqueSyntaxAttribute):
    """`#graph<weight_layout KN>`"""

    name = "graph.weight_layout"


class ConvAlgorithm(StrEnum):
    """How graph.conv2d computes: directly, or by Winograd F(2x2, 3x3)."""

    DIRECT = "direct"
    WINOGRAD = "winograd"


@irdl_attr_definition
class ConvAlgorithmAttr(EnumAttribute[ConvAlgorithm], SpacedOpaqueSyntaxAttribute):
    """`#graph<conv_algorithm winograd>`"""

    name = "graph.conv_algorithm"


class ScatterReduction(StrEnum):
    """How a scatter combines an update with what is there: replace it (the last
    update wins), add, multiply, or keep the larger or the smaller."""

    NONE = "none"
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class ScatterReductionAttr(EnumAttribute[ScatterReduction], SpacedOpaqueSyntaxAttribute):
    """`#graph<scatter_reduction add>`"""

    name = "graph.scatter_reduction"


class CumulativeKind(StrEnum):
    """What graph.cumulative accumulates: a running sum or product."""

    SUM = "sum"
    PROD = "prod"


@irdl_attr_definition
class CumulativeKindAttr(EnumAttribute[CumulativeKind], SpacedOpaqueSyntaxAttribute):
    """`#graph<cumulative_kind prod>`"""

    name = "graph.cumulative_kind"


def _is_discardable(name: str) -> bool:
    """Discardable attributes are namespaced (`tc.offsets`); any other name must be
    a property of the op."""
    return "." in name


# -- the op base ----------------------------------------------------------------


class GraphOp(IRDLOperation):
    """Tensors in, tensors out; typed properties (see `Prop`) for the rest.

    Subclasses set `name`, `traits`, their operands (IRDL operand definitions by
    name: `input`, `weight`, an optional `bias`; at most one optional or variadic
    group, whose count `VARIADIC` bounds), their properties and `infer`. `inputs` is
    every operand, in order, for code that treats ops alike. An op accepts only its own properties and namespaced discardable
    attributes (`tc.offsets`); anything else, a misspelling above all, is an error
    that names it, so a typo never runs as the default."""

    outputs = var_result_def()
    traits = traits_def(GraphCanonicalization(), GraphFolder())
    VARIADIC: ClassVar[tuple[int, int | None]] = (0, None)  # operands in the variadic group

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return tuple(self.operands)

    @classmethod
    @functools.cache
    def arity(cls) -> tuple[int, int | None]:
        """(least, most) operands: the single operands, plus the optional one or
        the variadic group's `VARIADIC` range (None: no most)."""
        defs = [d for _, d in cls.get_irdl_definition().operands]
        single = sum(not isinstance(d, VarOperandDef) for d in defs)
        if len(defs) == single:
            return single, single
        if any(isinstance(d, OptOperandDef) for d in defs):
            return single, single + 1
        lo, hi = cls.VARIADIC
        return single + lo, None if hi is None else single + hi

    @classmethod
    def group_operands(cls, inputs: Sequence[SSAValue]) -> list[SSAValue | list[SSAValue]]:
        """A flat operand list as IRDL takes it: one entry per operand definition,
        the optional or variadic one a list of what is left for it."""
        defs = [d for _, d in cls.get_irdl_definition().operands]
        spare = len(inputs) - (len(defs) - 1)
        grouped: list[SSAValue | list[SSAValue]] = []
        at = 0
        for d in defs:
            if isinstance(d, VarOperandDef):
                grouped.append(list(inputs[at : at + spare]))
                at += spare
            else:
                grouped.append(inputs[at])
                at += 1
        return grouped

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for name, prop in list(vars(cls).items()):
            if isinstance(prop, Prop):
                setattr(cls, f"{name}_attr", opt_prop_def(prop.constraint, prop_name=name))

    @classmethod
    @functools.cache
    def props(cls) -> dict[str, Prop]:
        """The op's typed properties by name (do not mutate: it is cached)."""
        found: dict[str, Prop] = {}
        for klass in reversed(cls.__mro__):
            found |= {k: v for k, v in vars(klass).items() if isinstance(v, Prop)}
        return found

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        properties: Mapping[str, object] | None = None,
        result_types: Sequence[Attribute] | None = None,
        attributes: Mapping[str, Attribute] | None = None,
    ):
        """`properties` maps names to Python values (ints, tuples, strings, enum
        members...) or attributes; None values are left out."""
        known = type(self).props()
        props: dict[str, Attribute] = {}
        for key, value in (properties or {}).items():
            if key not in known:
                raise TypeError(f"{self.name} has no attribute '{key}'{_suggestion(key, known)}")
            if value is not None:
                props[key] = known[key].to_attr(value)
        attributes = dict(attributes or {})
        if result_types is None:
            probe = type(self).__new__(type(self))
            probe.properties, probe.attributes = props, attributes
            result_types = type(self).infer(probe, [v.type for v in inputs])
        lo, hi = type(self).arity()
        if len(inputs) < lo or (hi is not None and len(inputs) > hi):
            # As a parser would make it, for the verifier to say what is wrong where
            # (an importer's op of a malformed model names its node).
            Operation.__init__(
                self, operands=inputs, result_types=result_types, properties=props, attributes=attributes
            )
            return
        super().__init__(
            operands=type(self).group_operands(list(inputs)), result_types=[list(result_types)],
            properties=props, attributes=attributes,
        )

    def with_properties(self, inputs: Sequence[SSAValue], **changes: object) -> GraphOp:
        """A new op of this kind on `inputs` with this op's properties and discardable
        attributes, `changes` applied (None removes a property); result types inferred."""
        properties: dict[str, object] = dict(self.properties)
        properties |= changes
        return type(self)(inputs, properties, attributes=self.attributes)

    # custom form ------------------------------------------------------------------
    # `graph.conv2d %x, %w {strides = array<i64: 2, 2>, tc.offsets = ...} : (...) -> ...`:
    # what `$inputs attr-dict : functional-type($inputs, $outputs)` with
    # `ParsePropInAttrDict` would print, except that the properties come first and
    # the discardable attributes after them (xDSL's attr-dict puts them first).

    def print(self, printer: Printer):
        if self.inputs:
            printer.print_string(" ")
            printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_op_attributes(self.properties | self.attributes)
        printer.print_string(" : ")
        printer.print_operation_type(self)

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        unresolved = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        ) or []
        entries = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        function = parser.parse_function_type()
        if len(function.inputs) != len(unresolved):
            parser.raise_error(
                f"{cls.name} has {len(unresolved)} operand{'s' * (len(unresolved) != 1)} "
                f"but its type lists {len(function.inputs)}",
                pos,
                parser.pos,
            )
        inputs = [parser.resolve_operand(u, t) for u, t in zip(unresolved, function.inputs.data)]
        known = cls.props()
        properties = {k: v for k, v in entries.items() if k in known}
        attributes = {k: v for k, v in entries.items() if k not in known}
        return cls.create(
            operands=inputs, result_types=list(function.outputs.data), properties=properties, attributes=attributes
        )

    # verification -----------------------------------------------------------------
    def verify(self, verify_nested_ops: bool = True) -> None:
        # Names and kinds first: a misspelled attribute is reported as such, not
        # as whatever its absence leads `infer` to complain about; then the operand
        # count, said as the op's (IRDL's own message names no op).
        self.verify_properties()
        lo, hi = type(self).arity()
        n = len(self.operands)
        if n < lo or (hi is not None and n > hi):
            raise VerifyException(f"{self.name} takes {_count(lo, hi)}, not {n}.")
        super().verify(verify_nested_ops)

    def verify_properties(self) -> None:
        known = type(self).props()
        verify_attribute_names(self, known)
        for key, attr in self.properties.items():
            prop = known.get(key)
            if prop is None:
                raise VerifyException(f"{self.name} has no attribute '{key}'{_suggestion(key, known)}.")
            prop.check(self, attr)
        for key, prop in known.items():
            if prop.required and key not in self.properties:
                raise VerifyException(f"{self.name} needs attribute '{key}'.")

    # shapes ---------------------------------------------------------------------
    def infer(self, types: list[Attribute]) -> list[TensorType]:
        raise NotImplementedError

    def verify_(self) -> None:
        if any(isinstance(v.type, UnrankedTensorType) for v in self.inputs):
            return  # shapes are not known yet: infer-shapes will check this op
        try:
            inferred = self.infer([v.type for v in self.inputs])
        except ShapeError as e:
            raise VerifyException(f"{e}.") from None
        except (ArithmeticError, IndexError, TypeError, ValueError) as e:
            # An `infer` that missed a check; still report it at the op.
            raise VerifyException(f"cannot infer the result types ({type(e).__name__}: {e}).") from None
        if len(inferred) != len(self.outputs):
            raise VerifyException(f"{self.name} has {len(self.outputs)} results but produces {len(inferred)}.")
        for r, t in zip(self.outputs, inferred):
            if isinstance(r.type, UnrankedTensorType):
                continue  # not inferred yet (infer-shapes fills it in)
            if r.type != t:
                raise VerifyException(f"{self.name} result is {r.type} but its operands give {t}.")


def present(*values: SSAValue | None) -> list[SSAValue]:
    """The values given, an absent optional operand (None) left out:
    `[x, w, *present(conv.bias)]`."""
    return [v for v in values if v is not None]


def _count(lo: int, hi: int | None) -> str:
    want = f"{lo}" if lo == hi else f"{lo} or more" if hi is None else f"{lo} to {hi}"
    return f"{want} {'operand' if want == '1' else 'operands'}"


def verify_attribute_names(op: Operation, known: Collection[str]) -> None:
    """Reject a discardable attribute that is not namespaced (a misspelled
    property, most likely) or that spells one of the op's `known` properties."""
    for key in op.attributes:
        if key in known:
            raise VerifyException(f"{op.name} attribute '{key}' must be a property (<{{{key} = ...}}>).")
        if not _is_discardable(key):
            raise VerifyException(f"{op.name} has no attribute '{key}'{_suggestion(key, known)}.")


def _suggestion(key: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    if known:
        return f" (it has {', '.join(repr(k) for k in known)})"
    return " (it takes none)"


# -- elementwise ------------------------------------------------------------------


class _Unary(GraphOp):
    input = operand_def()
    traits = traits_def(Pure(), Injective())

    def infer(self, types):
        return [ranked(types[0])]


@irdl_op_definition
class ReluOp(_Unary):
    name = "graph.relu"


@irdl_op_definition
class SigmoidOp(_Unary):
    name = "graph.sigmoid"


@irdl_op_definition
class TanhOp(_Unary):
    name = "graph.tanh"


@irdl_op_definition
class ErfOp(_Unary):
    name = "graph.erf"


@irdl_op_definition
class GeluOp(_Unary):
    """x * Phi(x); `approximate` is "none" (erf) or "tanh"."""

    name = "graph.gelu"
    approximate = Enum(ApproximateAttr, default="none")


@irdl_op_definition
class ExpOp(_Unary):
    name = "graph.exp"


@irdl_op_definition
class LogOp(_Unary):
    name = "graph.log"


@irdl_op_definition
class SqrtOp(_Unary):
    name = "graph.sqrt"


@irdl_op_definition
class NegOp(_Unary):
    name = "graph.neg"


@irdl_op_definition
class AbsOp(_Unary):
    name = "graph.abs"


@irdl_op_definition
class ClipOp(_Unary):
    """min(max(x, `min`), `max`); a missing bound is unbounded."""

    name = "graph.clip"
    min = Float(default=None)
    max = Float(default=None)


@irdl_op_definition
class RequantizeOp(GraphOp):
    """An integer accumulator scaled by 2^-`shift` back to a narrow integer type `to`:
    `clip(floor((x + 2^(shift-1)) / 2^shift), min(to), max(to))` (rounding half up;
    `shift` 0 only clips), wrapping at x's width as integer adds do. What a
    power-of-two symmetric quantization puts between two quantized layers (TVM's
    qnn.requantize with a power-of-two scale); the accelerator's ALU computes it as
    ADD, SHR, MAX, MIN and a narrowing store."""

    name = "graph.requantize"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    shift = Int(default=0)
    to = Type()

    def infer(self, types):
        x = ranked(types[0]).get_element_type()
        if not isinstance(x, IntegerType) or not isinstance(self.to, IntegerType):
            raise ShapeError(f"requantize takes an integer tensor to an integer type, got {x} to {self.to}")
        if not 0 <= self.shift < x.width.data - 1:  # 2^shift must be an x too
            raise ShapeError(f"shift {self.shift} must be in [0, {x.width.data - 1})")
        return [tensor(shape_of(types[0]), self.to)]


@irdl_op_definition
class CastOp(GraphOp):
    """Element type conversion to the element type `to` (`{to = f32}`); floats to
    integers truncate toward zero, anything to i1 is `!= 0`."""

    name = "graph.cast"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    to = Type()

    def infer(self, types):
        return [tensor(shape_of(types[0]), self.to)]


# -- bitcast (types helper) ------------------------------------------------------------

from xdsl.dialects.builtin import IndexType  # noqa: E402 - kept with the op that needs it


@irdl_op_definition
class BitcastOp(GraphOp):
    """The bits of each element read as the element type `to`, of the same width
    (ONNX BitCast): `{to = i32}` on f32 gives the float's IEEE bits."""

    name = "graph.bitcast"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    to = Type()

    def infer(self, types):
        source = ranked(types[0]).get_element_type()
        width = lambda t: None if isinstance(t, IndexType) else getattr(t, "bitwidth", None)  # noqa: E731
        if width(source) is None or width(source) != width(self.to) or width(source) == 1:
            raise ShapeError(f"cannot bitcast {source} to {self.to}: they are not of one bit width (8 to 64 bits)")
        return [tensor(shape_of(types[0]), self.to)]


class _Binary(GraphOp):
    traits = traits_def(Pure(), Broadcast())
    lhs = operand_def()
    rhs = operand_def()

    def infer(self, types):
        a, b = ranked(types[0]), ranked(types[1])
        if a.get_element_type() != b.get_element_type():
            raise ShapeError(f"element types {a.get_element_type()} and {b.get_element_type()} differ")
        return [tensor(broadcast_shapes(shape_of(a), shape_of(b)), a.get_element_type())]


@irdl_op_definition
class AddOp(_Binary):
    name = "graph.add"


@irdl_op_definition
class SubOp(_Binary):
    name = "graph.sub"


@irdl_op_definition
class MulOp(_Binary):
    name = "graph.mul"


@irdl_op_definition
class DivOp(_Binary):
    name = "graph.div"


@irdl_op_definition
class PowOp(_Binary):
    name = "graph.pow"


@irdl_op_definition
class MaximumOp(_Binary):
    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(_Binary):
    name = "graph.minimum"


@irdl_op_definition
class WhereOp(GraphOp):
    """`where(cond, a, b)` elementwise with broadcasting; cond is i1."""

    name = "graph.where"
    traits = traits_def(Pure(), Broadcast())
    condition = operand_def()
    on_true = operand_def()
    on_false = operand_def()

    def infer(self, types):
        c, a, b = (ranked(t) for t in types)
        if c.get_element_type() != i1:
            raise ShapeError(f"the condition must have element type i1, not {c.get_element_type()}")
        if a.get_element_type() != b.get_element_type():
            raise ShapeError("both branches must have one element type")
        return [tensor(broadcast_shapes(shape_of(c), shape_of(a), shape_of(b)), a.get_element_type())]


class _Compare(_Binary):
    """Elementwise comparison with broadcasting; the result is a mask of i1."""

    def infer(self, types):
        (out,) = super().infer(types)
        return [tensor(shape_of(out), i1)]


@irdl_op_definition
class EqualOp(_Compare):
    name = "graph.equal"


@irdl_op_definition
class LessOp(_Compare):
    name = "graph.less"


@irdl_op_definition
class GreaterOp(_Compare):
    name = "graph.greater"


@irdl_op_definition
class BroadcastToOp(GraphOp):
    """Broadcast the input against `shape` (ONNX Expand: the result's shape is the
    broadcast of both, so `shape` may have 1s where the input is larger)."""

    name = "graph.broadcast_to"
    input = operand_def()
    traits = traits_def(Pure(), Broadcast())
    shape = Ints()

    def infer(self, types):
        x = ranked(types[0])
        return [tensor(broadcast_shapes(shape_of(x), self.shape), x.get_element_type())]


# -- anchors: conv2d, dense, matmul, pooling ---------------------------------------


def window_rank(op: Operation) -> int:
    """The number of spatial axes of a convolution or pooling `op`: its first
    operand's rank less N and C (and the lane axis of a blocked layout)."""
    if not op.operands or not isinstance(op.operands[0].type, TensorType):
        return 2
    rank = len(shape_of(op.operands[0].type)) - 2
    return rank - 1 if isinstance(op, Conv2dOp) and op.data_layout != "NCHW" else rank


def window_value(op: GraphOp, name: str, rank: int, fill: int) -> tuple[int, ...]:
    """Property `name` of a window op (strides, pads, dilations), or its default for
    `rank` spatial axes: `fill` repeated (twice as many for pads). `infer` reads it
    this way, since it may run before the op has operands."""
    attr = op.properties.get(name)
    count = 2 * rank if name == "pads" else rank
    value = type(op).props()[name].value(attr) if attr is not None else (fill,) * count
    if len(value) != count:
        raise ShapeError(f"{name} needs {count} values for {rank} spatial axes, got {len(value)}")
    return value


STRADDLE = re.compile(r"straddle(\d+)c(\d+)o(\d+)i(\d+)o")


def straddle_layout(kernel_layout: str) -> tuple[int, int, int, int] | None:
    """(C, O, in-block, out-block) of a kernel layout "straddle<C>c<O>o<i>i<o>o",
    else None."""
    m = STRADDLE.fullmatch(kernel_layout)
    return tuple(int(v) for v in m.groups()) if m else None  # type: ignore[return-value]


@dataclass(frozen=True)
class StraddleRows:
    """The weight rows of a grouped conv whose output channel blocks straddle groups
    (kernel layout "straddle<C>c<O>o<i>i<o>o", topi/conv2d.py
    `conv2d_straddle_compute`): a row per (output block, group of its lanes), rows
    0 .. OCB-1 for each block's first group and one more per straddling block;
    `group[r]` and `block[r]` (the output block whose lanes of that group it
    computes) of each row. A row reads exactly the C/groups input channels of its
    group, `i` at a time."""

    group: tuple[int, ...]
    block: tuple[int, ...]

    def extra(self, ocb: int) -> list[int]:
        """The rows after the first that compute lanes of output block `ocb`."""
        return [r for r in range(len(self.group)) if self.block[r] == ocb and r != ocb]


def straddle_rows(in_channels: int, out_channels: int, groups: int, in_block: int, out_block: int) -> StraddleRows:
    """The rows of a straddling grouped conv of C -> O channels (O padded up to whole
    blocks of `out_block`) that reads its input `in_block` channels at a time; a
    ValueError where the groups do not split the channels, `in_block` does not
    divide a group's input channels, or an output block holds more than two groups."""
    C, O = in_channels, out_channels
    if groups <= 0 or C % groups or O % groups or in_block <= 0 or out_block <= 0:
        raise ValueError(f"straddling conv: {C} -> {O} channels do not split into groups={groups}")
    Cg, Og = C // groups, O // groups
    if Cg % in_block:
        raise ValueError(f"straddling conv: {Cg} input channels per group are not blocks of {in_block}")
    OCB = -(-O // out_block)
    first: list[tuple[int, int]] = []  # (block, group) of rows 0 .. OCB-1
    more: list[tuple[int, int]] = []
    for ocb in range(OCB):
        g0 = ocb * out_block // Og
        g1 = (min(ocb * out_block + out_block, O) - 1) // Og
        if g1 > g0 + 1:
            raise ValueError(
                f"straddling conv: {Og} output channels per group, a block of {out_block} holds more than two groups"
            )
        first.append((ocb, g0))
        more += [(ocb, g) for g in range(g0 + 1, g1 + 1)]
    pairs = first + more
    return StraddleRows(group=tuple(g for _, g in pairs), block=tuple(b for b, _ in pairs))


@irdl_op_definition
class Conv2dOp(GraphOp):
    """Convolution with optional bias [O] over 1 to 3 spatial axes (the name is the
    2-D case it began with; the input's rank gives the spatial rank): attributes
    `strides`, `pads` [begin..., end...] ([top, left, bottom, right] in 2-D),
    `dilations`, `groups` (defaults: ones, zeros, ones, 1), and, in 2-D only, layouts:

    - `data_layout` "NCHW" (default) or blocked "NCHW<b>c": input [N, C/b, H, W, b];
    - `kernel_layout` "OIHW" (default) or "OIHW<i>i<o>o": weight [O/o, I/i, KH, KW, i, o];
      or, for a grouped conv of C -> O channels whose groups cut blocks,
      "straddle<C>c<O>o<i>i<o>o": weight [rows, C/groups/i, KH, KW, i, o] as
      `straddle_rows` gives them (NCHW<b>c data with i dividing b, NCHW<o>c output,
      C and O padded to whole blocks);
    - `out_layout` (default: `data_layout`) likewise for the output.

    Blocked layouts (what alter-layout produces) take no bias operand.

    `algorithm` "direct" (default) or "winograd": Winograd F(2x2, 3x3) (what
    winograd-conv2d chooses), for a 3x3 kernel, strides and dilations 1, groups 1 and
    blocked data, kernel and output layouts whose channel blocks agree; the weight is
    then the transformed one, `graph.winograd_weight` of the OIHW<i>i<o>o weight:
    [4, 4, O/o, I/i, i, o]."""

    name = "graph.conv2d"
    traits = traits_def(Pure(), ComplexOutFusable())
    input = operand_def()
    weight = operand_def()
    bias = opt_operand_def()
    strides = Ints(default=lambda op: (1,) * window_rank(op))
    pads = Ints(default=lambda op: (0,) * 2 * window_rank(op))
    dilations = Ints(default=lambda op: (1,) * window_rank(op))
    groups = Int(default=1)
    data_layout = Str(default="NCHW")
    kernel_layout = Str(default="OIHW")
    out_layout = Str(default=lambda op: op.data_layout)
    algorithm = Enum(ConvAlgorithmAttr, default="direct")

    def layouts(self) -> tuple[int, tuple[int, int], int]:
        """(input block, (kernel in-block, kernel out-block), output block); 0 = unblocked."""
        data, kernel, out = self.data_layout, self.kernel_layout, self.out_layout
        kb = (0, 0)
        straddle = straddle_layout(kernel)
        if straddle is not None:
            kb = straddle[2:]
        elif kernel != "OIHW":
            m = re.fullmatch(r"OIHW(\d+)i(\d+)o", kernel)
            if not m:
                raise ShapeError(f"unknown kernel layout '{kernel}' (OIHW, OIHW<i>i<o>o or straddle<C>c<O>o<i>i<o>o)")
            kb = (int(m.group(1)), int(m.group(2)))
        return layout_block(data), kb, layout_block(out)

    def infer(self, types):
        db, (kib, kob), ob = self.layouts()
        x, w = shape_of(types[0]), shape_of(types[1])
        if db:
            if len(x) != 5 or x[4] != db:
                raise ShapeError(f"input {x} is not in layout NCHW{db}c")
            n, c, spatial = x[0], x[1] * db, x[2:4]
        elif not 3 <= len(x) <= 5:
            raise ShapeError(f"conv2d takes an N, C and 1 to 3 spatial axes input, got rank {len(x)}")
        else:
            n, c, spatial = x[0], x[1], x[2:]
        rank = len(spatial)
        if rank != 2 and (kob or ob):
            raise ShapeError(f"blocked layouts are 2-D, the input {x} has {rank} spatial axes")
        straddle = straddle_layout(self.kernel_layout)
        if straddle is not None and self.algorithm == "direct":
            return self.infer_straddle(types, straddle)
        if self.algorithm == "winograd":
            check_winograd(self, db, (kib, kob), ob, w)
            o, ci, kernel = w[2] * kob, w[3] * kib, (3, 3)
        elif kob:
            if len(w) != 6 or w[4] != kib or w[5] != kob:
                raise ShapeError(f"weight {w} is not in layout OIHW{kib}i{kob}o")
            o, ci, kernel = w[0] * kob, w[1] * kib, w[2:4]
        elif len(w) != len(spatial) + 2:
            raise ShapeError(f"conv2d takes a weight [O, I, kernel...] of rank {rank + 2}, got rank {len(w)}")
        else:
            o, ci, kernel = w[0], w[1], w[2:]
        groups = self.groups
        if groups < 1:
            raise ShapeError(f"groups must be positive, got {groups}")
        strides = window_value(self, "strides", rank, 1)
        pads = window_value(self, "pads", rank, 0)
        dilations = window_value(self, "dilations", rank, 1)
        if c % groups or o % groups or ci * groups != c:
            raise ShapeError(f"input channels {c} and weight {w} do not match groups={groups}")
        if len(types) == 3:
            if db or kob or ob:
                raise ShapeError("a conv2d in blocked layouts takes no bias operand")
            if shape_of(types[2]) != (o,):
                raise ShapeError(f"bias must have shape ({o},), got {shape_of(types[2])}")
        out = tuple(
            pool_out(size, k, s, lo, hi, d)
            for size, k, s, lo, hi, d in zip(spatial, kernel, strides, pads[:rank], pads[rank:], dilations)
        )
        element = ranked(types[0]).get_element_type()
        if ob:
            if o % ob:
                raise ShapeError(f"{o} output channels do not split into blocks of {ob}")
            return [tensor((n, o // ob, *out, ob), element)]
        return [tensor((n, o, *out), element)]

    def infer_straddle(self, types, layout: tuple[int, int, int, int]):
        c, o, ib, ob = layout
        db, ob_out = layout_block(self.data_layout), layout_block(self.out_layout)
        if not db or db % ib or ob_out != ob:
            raise ShapeError(
                f"kernel layout {self.kernel_layout} needs data NCHW<b>c with b a multiple of {ib} and output "
                f"NCHW{ob}c, not {self.data_layout} and {self.out_layout}"
            )
        x, w = shape_of(types[0]), shape_of(types[1])
        if len(x) != 5 or x[4] != db or x[1] != -(-c // db):
            raise ShapeError(f"input {x} is not {c} channels in layout NCHW{db}c")
        if len(types) == 3:
            raise ShapeError("a conv2d in blocked layouts takes no bias operand")
        try:
            rows = straddle_rows(c, o, self.groups, ib, ob)
        except ValueError as e:
            raise ShapeError(str(e)) from None
        sub = c // self.groups // ib
        if len(w) != 6 or (w[0], w[1], w[4], w[5]) != (len(rows.group), sub, ib, ob):
            raise ShapeError(
                f"weight {w} is not in layout {self.kernel_layout} "
                f"([{len(rows.group)}, {sub}, KH, KW, {ib}, {ob}])"
            )
        strides = window_value(self, "strides", 2, 1)
        pads = window_value(self, "pads", 2, 0)
        dilations = window_value(self, "dilations", 2, 1)
        if tuple(dilations) != (1, 1):
            raise ShapeError(f"kernel layout {self.kernel_layout} takes no dilations, got {dilations}")
        out = tuple(
            pool_out(size, k, s, lo, hi, 1) for size, k, s, lo, hi in zip(x[2:4], w[2:4], strides, pads[:2], pads[2:])
        )
        return [tensor((x[0], -(-o // ob), *out, ob), ranked(types[0]).get_element_type())]


def check_winograd(op: Conv2dOp, db: int, kb: tuple[int, int], ob: int, w: Sequence[int]) -> None:
    """What a Winograd F(2x2, 3x3) conv2d needs (see Conv2dOp), as a ShapeError."""
    kib, kob = kb
    if not (db and kob and ob) or kib != db or kob != ob:
        raise ShapeError(
            "algorithm 'winograd' needs blocked layouts NCHW<b>c, OIHW<b>i<b>o and NCHW<b>c with one block b, "
            f"got {op.data_layout}, {op.kernel_layout} and {op.out_layout}"
        )
    if len(w) != 6 or tuple(w[:2]) != (4, 4) or w[4] != kib or w[5] != kob:
        raise ShapeError(f"a winograd weight is [4, 4, O/{kob}, I/{kib}, {kib}, {kob}] (graph.winograd_weight), got {tuple(w)}")
    for name in ("strides", "dilations"):
        if any(v != 1 for v in window_value(op, name, 2, 1)):
            raise ShapeError(f"algorithm 'winograd' needs {name} 1, got {window_value(op, name, 2, 1)}")
    if op.groups != 1:
        raise ShapeError(f"algorithm 'winograd' needs groups 1, got {op.groups}")


@irdl_op_definition
class DenseOp(GraphOp):
    """x[..., K] @ w[N, K]^T (+ bias[N]) -> [..., N] (the weight is stored transposed,
    as ONNX Gemm with transB and TVM's dense).

    `weight_layout` "NK" (default), "KN" (a [K, N] weight, x @ w) or "NK64n" ([N/64,
    K, 64]: the KN weight cut into panels of 64 columns, what the GEMM's register
    tile reads; alter-layout packs constant weights into it)."""

    name = "graph.dense"
    traits = traits_def(Pure(), ComplexOutFusable())
    input = operand_def()
    weight = operand_def()
    bias = opt_operand_def()
    weight_layout = Enum(WeightLayoutAttr, default="NK")

    def infer(self, types):
        x, w = shape_of(types[0]), shape_of(types[1])
        layout = self.weight_layout
        nk = dense_weight_nk(w, layout)
        n, k = nk or (0, 0)
        if nk is None or not x or x[-1] != k:
            want = {"NK": "w[N, K]", "KN": "w[K, N]"}.get(layout, f"w[N/{PANEL}, K, {PANEL}]")
            raise ShapeError(f"dense needs x[..., K] and {want}, got {x} and {w}")
        if len(types) == 3 and shape_of(types[2]) != (n,):
            raise ShapeError(f"bias must have shape ({n},), got {shape_of(types[2])}")
        return [tensor((*x[:-1], n), ranked(types[0]).get_element_type())]


@irdl_op_definition
class MatmulOp(GraphOp):
    """numpy's matmul on the last two axes, batch axes broadcast (batch_matmul)."""

    name = "graph.matmul"
    traits = traits_def(Pure(), ComplexOutFusable())
    lhs = operand_def()
    rhs = operand_def()

    def infer(self, types):
        a, b = shape_of(types[0]), shape_of(types[1])
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            raise ShapeError(f"matmul needs [..., M, K] and [..., K, N], got {a} and {b}")
        batch = broadcast_shapes(a[:-2], b[:-2])
        return [tensor((*batch, a[-2], b[-1]), ranked(types[0]).get_element_type())]


def _layout_input(layout: str, x: Sequence[int], what: str) -> int:
    """The channel block of a pooling `layout` ("NCHW" or "NCHW<b>c"), checked
    against the input shape `x`."""
    block = layout_block(layout)
    if block and (len(x) != 5 or x[4] != block):
        raise ShapeError(f"{what} input {tuple(x)} is not in layout NCHW{block}c")
    if not block and len(x) != 4:
        raise ShapeError(f"{what} takes NCHW input, got rank {len(x)}")
    return block


class _Pool(GraphOp):
    """Pooling over 1 to 3 spatial axes (the names are the 2-D case they began
    with; `kernel`'s length is the spatial rank): `kernel`, `strides`, `pads`
    [begin..., end...], `dilations` (defaults: ones, zeros, ones), `ceil_mode`, and
    in 2-D `layout` "NCHW" (default) or "NCHW<b>c" ([N, C/b, H, W, b] in and out)."""
    input = operand_def()

    traits = traits_def(Pure(), ComplexOutFusable())
    kernel = Ints()
    strides = Ints(default=lambda op: (1,) * len(op.kernel))
    pads = Ints(default=lambda op: (0,) * 2 * len(op.kernel))
    dilations = Ints(default=lambda op: (1,) * len(op.kernel))
    ceil_mode = Bool(default=False)
    layout = Str(default="NCHW")

    def infer(self, types):
        x = shape_of(types[0])
        kernel = self.kernel
        rank = len(kernel)
        if not 1 <= rank <= 3:
            raise ShapeError(f"pooling windows have 1 to 3 axes, got kernel {list(kernel)}")
        if rank != 2 and self.layout != "NCHW":
            raise ShapeError(f"blocked layouts are 2-D, the kernel {list(kernel)} has {rank} axes")
        if rank == 2:
            _layout_input(self.layout, x, "pooling")
        elif len(x) != rank + 2:
            raise ShapeError(f"a {rank}-D pooling takes an input of rank {rank + 2}, got rank {len(x)}")
        strides = window_value(self, "strides", rank, 1)
        pads = window_value(self, "pads", rank, 0)
        dilations = window_value(self, "dilations", rank, 1)
        out = list(x)
        for axis, (k, s, lo, hi, d) in enumerate(zip(kernel, strides, pads[:rank], pads[rank:], dilations)):
            out[2 + axis] = pool_out(x[2 + axis], k, s, lo, hi, d, self.ceil_mode)
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class MaxPool2dOp(_Pool):
    name = "graph.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(_Pool):
    """Average pooling; `count_include_pad` as in ONNX."""

    name = "graph.avg_pool2d"
    count_include_pad = Bool(default=False)


@irdl_op_definition
class MaxPoolIndicesOp(_Pool):
    """Where max_pool2d finds each window's maximum (ONNX MaxPool's Indices): the
    first window position holding it, as an i64 index into the flattened input;
    `storage_order` 1 flattens the spatial axes column-major (N and C stay outer).
    Plain layout only."""

    name = "graph.max_pool_indices"
    storage_order = Int(default=0)

    def infer(self, types):
        if self.layout != "NCHW":
            raise ShapeError(f"max_pool_indices takes the plain layout, not {self.layout}")
        if self.storage_order not in (0, 1):
            raise ShapeError(f"storage_order must be 0 or 1, got {self.storage_order}")
        (out,) = super().infer(types)
        return [tensor(shape_of(out), i64)]


@irdl_op_definition
class GlobalAvgPool2dOp(GraphOp):
    """The mean over H and W; `layout` "NCHW" (default, [N, C, 1, 1] out) or
    "NCHW<b>c" ([N, C/b, 1, 1, b] out)."""

    name = "graph.global_avg_pool2d"
    input = operand_def()
    traits = traits_def(Pure(), Reduction())
    layout = Str(default="NCHW")

    def infer(self, types):
        x = shape_of(types[0])
        _layout_input(self.layout, x, "global pooling")
        return [tensor((x[0], x[1], 1, 1, *x[4:]), ranked(types[0]).get_element_type())]


# -- reductions and normalizations ----------------------------------------------------


class _Reduce(GraphOp):
    """Reduce over `axes` (all when absent), keeping them as 1s if `keepdims` (default 1)."""
    input = operand_def()

    traits = traits_def(Pure(), Reduction())
    axes = Ints(default=None, doc="the axes to reduce; None: all")
    keepdims = Bool(default=True)

    def reduce_axes(self, rank: int) -> list[int]:
        axes = range(rank) if self.axes is None else self.axes
        return sorted({normalize_axis(a, rank) for a in axes})

    def infer(self, types):
        x = shape_of(types[0])
        axes = self.reduce_axes(len(x))
        keep = self.keepdims
        shape = [1 if d in axes else n for d, n in enumerate(x)] if keep else [n for d, n in enumerate(x) if d not in axes]
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class ReduceSumOp(_Reduce):
    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(_Reduce):
    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(_Reduce):
    name = "graph.reduce_max"


# -- reductions of the ONNX Reduce* family (min, prod) and scans ------------------------


@irdl_op_definition
class ReduceMinOp(_Reduce):
    name = "graph.reduce_min"


@irdl_op_definition
class ReduceProdOp(_Reduce):
    name = "graph.reduce_prod"


@irdl_op_definition
class CumulativeOp(GraphOp):
    """Running sums (`kind` "sum") or products ("prod") along `axis`: element i is the
    sum of elements 0..i (`exclusive`: 0..i-1; `reverse`: from the end), ONNX CumSum
    and CumProd."""

    name = "graph.cumulative"
    input = operand_def()
    traits = traits_def(Pure(), Opaque())
    axis = Int(default=0)
    kind = Enum(CumulativeKindAttr, default="sum")
    exclusive = Bool(default=False)
    reverse = Bool(default=False)

    def infer(self, types):
        x = ranked(types[0])
        normalize_axis(self.axis, len(x.get_shape()))
        return [x]


# -- gathers and scatters by element (ONNX GatherElements, GatherND, Scatter*) ---------


def _integer_ids(t: Attribute, op: str) -> None:
    if not isinstance(ranked(t).get_element_type(), IntegerType):
        raise ShapeError(f"{op} indices must be integers")


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """out[i] = data[i with i[axis] replaced by indices[i]] (ONNX GatherElements):
    `indices` has data's rank; the result has its shape."""

    name = "graph.gather_elements"
    traits = traits_def(Pure(), Injective())
    input = operand_def()
    indices = operand_def()
    axis = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        _integer_ids(types[1], self.name)
        if len(idx) != len(x):
            raise ShapeError(f"indices of rank {len(idx)} for data of rank {len(x)}")
        normalize_axis(self.axis, len(x))
        return [tensor(idx, ranked(types[0]).get_element_type())]


@irdl_op_definition
class GatherNDOp(GraphOp):
    """ONNX GatherND: each row of the last axis of `indices` (k ids) picks a slice
    data[b..., i_0, ..., i_k-1, :...] after `batch_dims` shared leading axes."""

    name = "graph.gather_nd"
    traits = traits_def(Pure(), Injective())
    input = operand_def()
    indices = operand_def()
    batch_dims = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        _integer_ids(types[1], self.name)
        b = self.batch_dims
        if not idx or not 0 <= b < len(idx) or b + idx[-1] > len(x) or tuple(idx[:b]) != tuple(x[:b]):
            raise ShapeError(f"indices {idx} do not index data {x} with batch_dims {b}")
        return [tensor((*idx[:-1], *x[b + idx[-1] :]), ranked(types[0]).get_element_type())]


class _Scatter(GraphOp):
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    indices = operand_def()
    updates = operand_def()
    reduction = Enum(ScatterReductionAttr, default="none", doc="none (the last update wins), add, mul, max or min")


@irdl_op_definition
class ScatterElementsOp(_Scatter):
    """ONNX ScatterElements: data with updates[j] written (or combined, `reduction`) at
    j with j[axis] replaced by indices[j]."""

    name = "graph.scatter_elements"
    axis = Int(default=0)

    def infer(self, types):
        x, idx, upd = shape_of(types[0]), shape_of(types[1]), shape_of(types[2])
        _integer_ids(types[1], self.name)
        axis = normalize_axis(self.axis, len(x))
        if idx != upd or len(idx) != len(x) or any(i > n for d, (i, n) in enumerate(zip(idx, x)) if d != axis):
            raise ShapeError(f"indices {idx} and updates {upd} do not fit data {x}")
        return [ranked(types[0])]


@irdl_op_definition
class ScatterNDOp(_Scatter):
    """ONNX ScatterND: `indices` [m, k] and `updates` [m, *data[k:]] (leading axes
    flattened): data with update j written (or combined) at data[indices[j], :...]."""

    name = "graph.scatter_nd"

    def infer(self, types):
        x, idx, upd = shape_of(types[0]), shape_of(types[1]), shape_of(types[2])
        _integer_ids(types[1], self.name)
        if len(idx) != 2 or idx[1] > len(x) or tuple(upd) != (idx[0], *x[idx[1] :]):
            raise ShapeError(f"indices {idx} and updates {upd} do not fit data {x}")
        return [ranked(types[0])]


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """softmax along `axis` (default -1)."""

    name = "graph.softmax"
    input = operand_def()
    traits = traits_def(Pure(), Opaque())
    axis = Int(default=-1)

    def infer(self, types):
        x = ranked(types[0])
        normalize_axis(self.axis, len(x.get_shape()))
        return [x]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """(x - mean) / sqrt(var + epsilon) * scale + bias over the last axes from `axis`."""

    name = "graph.layer_norm"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    params = var_operand_def()  # scale, then bias, each optional
    VARIADIC: ClassVar = (0, 2)
    axis = Int(default=-1)
    epsilon = Float(default=1e-5)

    def infer(self, types):
        x = shape_of(types[0])
        axis = normalize_axis(self.axis, len(x))
        norm = x[axis:]
        for t in types[1:]:
            if shape_of(t) != norm:
                raise ShapeError(f"scale and bias must have shape {norm}, got {shape_of(t)}")
        return [ranked(types[0])]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch norm on NCHW: (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c];
    operands x, scale, bias, mean, var."""

    name = "graph.batch_norm"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    scale = operand_def()
    bias = operand_def()
    mean = operand_def()
    variance = operand_def()
    epsilon = Float(default=1e-5)

    def parameters(self) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """scale, bias, mean, variance."""
        return self.scale, self.bias, self.mean, self.variance

    def infer(self, types):
        x = shape_of(types[0])
        if len(x) < 2:
            raise ShapeError("batch_norm needs a channel axis")
        for t in types[1:]:
            if shape_of(t) != (x[1],):
                raise ShapeError(f"batch_norm parameters must have shape ({x[1]},), got {shape_of(t)}")
        return [ranked(types[0])]


# -- data movement ---------------------------------------------------------------------


class _Injective(GraphOp):
    traits = traits_def(Pure(), Injective())


@irdl_op_definition
class PadOp(_Injective):
    """Constant padding: `pads` [begin_0.., end_0..], `value` (default 0)."""

    name = "graph.pad"
    input = operand_def()
    pads = Ints()
    value = Float(default=0.0)

    def infer(self, types):
        x = shape_of(types[0])
        pads = list(self.pads)
        if len(pads) != 2 * len(x):
            raise ShapeError(f"pads needs {2 * len(x)} values for rank {len(x)}, got {len(pads)}")
        out = [n + pads[d] + pads[d + len(x)] for d, n in enumerate(x)]
        if any(n < 0 for n in out):  # 0 is an empty tensor (fold-empty-tensors)
            raise ShapeError(f"padding {pads} crops more than the extents {tuple(x)}")
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class ReshapeOp(_Injective):
    """Row-major reshape to `shape` (one -1 allowed, 0 copies the input extent)."""

    name = "graph.reshape"
    input = operand_def()
    shape = Ints()

    def infer(self, types):
        x = shape_of(types[0])
        shape = list(self.shape)
        if any(s == 0 and d >= len(x) for d, s in enumerate(shape)) or any(s < -1 for s in shape):
            raise ShapeError(f"bad target shape {shape} for input {x} (0 copies an input extent, -1 is inferred)")
        shape = [x[d] if s == 0 else s for d, s in enumerate(shape)]
        total = math.prod(x)
        if shape.count(-1) > 1:
            raise ShapeError("reshape allows one -1")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or total % known:
                raise ShapeError(f"cannot reshape {x} to {shape}")
            shape[shape.index(-1)] = total // known
        if math.prod(shape) != total:
            raise ShapeError(f"cannot reshape {x} ({total} elements) to {tuple(shape)}")
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class FlattenOp(_Injective):
    """To 2-D: dims before `axis` (default 1) and from it."""

    name = "graph.flatten"
    input = operand_def()
    axis = Int(default=1)

    def infer(self, types):
        x = shape_of(types[0])
        axis = self.axis
        axis = axis + len(x) if axis < 0 else axis
        if not 0 <= axis <= len(x):
            raise ShapeError(f"flatten axis {axis} out of range for rank {len(x)}")
        return [tensor((math.prod(x[:axis]), math.prod(x[axis:])), ranked(types[0]).get_element_type())]


@irdl_op_definition
class SqueezeOp(_Injective):
    name = "graph.squeeze"
    input = operand_def()
    axes = Ints(default=None, doc="the axes to remove; None: every axis of extent 1")

    def infer(self, types):
        x = shape_of(types[0])
        axes = {normalize_axis(a, len(x)) for a in (self.axes if self.axes is not None else [d for d, n in enumerate(x) if n == 1])}
        for a in axes:
            if x[a] != 1:
                raise ShapeError(f"cannot squeeze axis {a} of extent {x[a]}")
        return [tensor([n for d, n in enumerate(x) if d not in axes], ranked(types[0]).get_element_type())]


@irdl_op_definition
class UnsqueezeOp(_Injective):
    name = "graph.unsqueeze"
    input = operand_def()
    axes = Ints()

    def infer(self, types):
        x = list(shape_of(types[0]))
        rank = len(x) + len(self.axes)
        for a in sorted(normalize_axis(a, rank) for a in self.axes):
            x.insert(a, 1)
        return [tensor(x, ranked(types[0]).get_element_type())]


@irdl_op_definition
class TransposeOp(_Injective):
    """Permute axes by `perm` (default: reverse)."""

    name = "graph.transpose"
    input = operand_def()
    perm = Ints(default=None, doc="the permutation; None: reverse the axes")

    def permutation(self, rank: int) -> list[int]:
        return list(reversed(range(rank))) if self.perm is None else list(self.perm)

    def infer(self, types):
        x = shape_of(types[0])
        perm = self.permutation(len(x))
        if sorted(perm) != list(range(len(x))):
            raise ShapeError(f"perm {perm} is not a permutation of {len(x)} axes")
        return [tensor([x[p] for p in perm], ranked(types[0]).get_element_type())]


@irdl_op_definition
class ConcatOp(_Injective):
    name = "graph.concat"
    inputs = var_operand_def()
    VARIADIC: ClassVar = (1, None)
    axis = Int()

    def infer(self, types):
        shapes = [shape_of(t) for t in types]
        axis = normalize_axis(self.axis, len(shapes[0]))
        for s in shapes[1:]:
            if len(s) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0])) if d != axis):
                raise ShapeError(f"cannot concatenate {shapes[0]} and {s} along axis {axis}")
        if len({ranked(t).get_element_type() for t in types}) > 1:
            raise ShapeError("all operands must have one element type")
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class SplitOp(_Injective):
    """Split along `axis` into pieces of `sizes`."""

    name = "graph.split"
    input = operand_def()
    axis = Int(default=0)
    sizes = Ints()

    def infer(self, types):
        x = shape_of(types[0])
        axis = normalize_axis(self.axis, len(x))
        sizes = list(self.sizes)
        if not sizes or min(sizes) < 0:  # a 0 size is an empty piece (fold-empty-tensors)
            raise ShapeError(f"split sizes {sizes} must not be negative")
        if sum(sizes) != x[axis]:
            raise ShapeError(f"split sizes {sizes} do not add up to extent {x[axis]}")
        return [tensor([s if d == axis else n for d, n in enumerate(x)], ranked(types[0]).get_element_type()) for s in sizes]


@irdl_op_definition
class SliceOp(_Injective):
    """`starts`, `ends`, `axes`, `steps` as ONNX Slice (static)."""

    name = "graph.slice"
    input = operand_def()
    starts = Ints()
    ends = Ints()
    axes = Ints(default=None, doc="the axes sliced; None: the first len(starts)")
    steps = Ints(default=None, doc="the steps; None: 1 on every axis")

    def ranges(self, x: Sequence[int]) -> list[tuple[int, int, int]]:
        starts, ends = self.starts, self.ends
        axes = [normalize_axis(a, len(x)) for a in (self.axes if self.axes is not None else range(len(starts)))]
        steps = self.steps if self.steps is not None else (1,) * len(starts)
        out = [(0, n, 1) for n in x]
        for a, s, e, st in zip(axes, starts, ends, steps):
            if st == 0:
                raise ShapeError("slice step cannot be 0")
            s, e, _ = slice(s, e, st).indices(x[a])
            out[a] = (s, e, st)
        return out

    def infer(self, types):
        x = shape_of(types[0])
        shape = [len(range(s, e, st)) for s, e, st in self.ranges(x)]  # empty: 0 (fold-empty-tensors)
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class GatherOp(_Injective):
    """take(data, indices, axis): embeddings with integer ids."""

    name = "graph.gather"
    input = operand_def()
    indices = operand_def()
    axis = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        if not isinstance(ranked(types[1]).get_element_type(), IntegerType):
            raise ShapeError("gather indices must be integers")
        axis = normalize_axis(self.axis, len(x))
        return [tensor((*x[:axis], *idx, *x[axis + 1 :]), ranked(types[0]).get_element_type())]


@irdl_op_definition
class LayoutTransformOp(_Injective):
    """Between NCHW and blocked NCHW[x]c: `src` and `dst` layouts, e.g. "NCHW" -> "NCHW16c"."""

    name = "graph.layout_transform"
    input = operand_def()
    src = Str()
    dst = Str()

    def infer(self, types):
        x = shape_of(types[0])
        return [tensor(layout_shape(x, self.src, self.dst), ranked(types[0]).get_element_type())]


@irdl_op_definition
class WinogradWeightOp(GraphOp):
    """The Winograd F(2x2, 3x3) transform G g G^T of a 3x3 conv weight in layout
    OIHW<i>i<o>o ([O/o, I/i, 3, 3, i, o]) -> [4, 4, O/o, I/i, i, o], the weight of a
    `graph.conv2d` with `algorithm = "winograd"`. Its operand is a known weight, so
    fold-constants computes it once, at compile time."""

    name = "graph.winograd_weight"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()

    def infer(self, types):
        w = shape_of(types[0])
        if len(w) != 6 or tuple(w[2:4]) != (3, 3):
            raise ShapeError(f"winograd_weight takes a 3x3 weight [O/o, I/i, 3, 3, i, o], got {w}")
        return [tensor((4, 4, w[0], w[1], w[4], w[5]), ranked(types[0]).get_element_type())]


def layout_block(layout: str) -> int:
    """16 for "NCHW16c", 0 for "NCHW"."""
    if layout == "NCHW":
        return 0
    if layout.startswith("NCHW") and layout.endswith("c") and layout[4:-1].isdigit() and int(layout[4:-1]) > 0:
        return int(layout[4:-1])
    raise ShapeError(f"unknown layout '{layout}' (NCHW or NCHW<x>c)")


def layout_shape(shape: Sequence[int], src: str, dst: str) -> tuple[int, ...]:
    bs, bd = layout_block(src), layout_block(dst)
    if bs:
        if len(shape) != 5 or shape[4] != bs:
            raise ShapeError(f"{shape} is not in layout {src}")
        n, co, h, w, _ = shape
        c = co * bs
    else:
        if len(shape) != 4:
            raise ShapeError(f"{shape} is not in layout {src}")
        n, c, h, w = shape
    if not bd:
        return (n, c, h, w)
    if c % bd:
        raise ShapeError(f"{c} channels do not split into blocks of {bd}")
    return (n, c // bd, h, w, bd)


# -- values without operands ------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A small inline constant: `%c = graph.constant dense<1.0> : tensor<4xf32>`."""

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    outputs = var_result_def()
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[[value.type]])

    def verify_(self) -> None:
        verify_attribute_names(self, ("value",))
        if len(self.outputs) != 1 or self.outputs[0].type != self.value.type:
            raise VerifyException("graph.constant has one result, of its value's type.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("graph.constant takes a dense<...> : tensor<...> value", start, parser.pos)
        op = cls(value)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A named array from the weight store: `%w = graph.weight "fc.weight" : tensor<10x4xf32>`."""

    name = "graph.weight"
    weight_name = prop_def(StringAttr, prop_name="name")
    outputs = var_result_def()
    traits = traits_def(Pure())
    assembly_format = "$name attr-dict `:` type($outputs)"

    def __init__(self, name: str, result_type: TensorType):
        super().__init__(properties={"name": StringAttr(name)}, result_types=[[result_type]])

    def verify_(self) -> None:
        verify_attribute_names(self, ("name",))


# -- fused groups ------------------------------------------------------------------------


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "graph.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        verify_attribute_names(self, ())


@irdl_op_definition
class FusedOp(IRDLOperation):
    """A fused group, compiled as one kernel: its region's arguments are the group's
    inputs, its yield the group's outputs.

    ```mlir
    %y = graph.fused "fused_conv2d_relu" (%x, %w) : (tensor<..>, tensor<..>) -> tensor<..> {
    ^bb0(%a: tensor<..>, %b: tensor<..>):
      ...
      graph.yield %r : tensor<..>
    }
    ```"""

    name = "graph.fused"
    group_name = prop_def(StringAttr, prop_name="name")
    inputs = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), Pure())

    def __init__(self, name: str, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"name": StringAttr(name)},
            regions=[body],
        )

    def verify_(self) -> None:
        verify_attribute_names(self, ("name",))
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException("graph.fused region arguments must match its operands.")
        term = block.last_op
        if not isinstance(term, YieldOp) or [v.type for v in term.values] != [r.type for r in self.outputs]:
            raise VerifyException("graph.fused must end with graph.yield of its result types.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_string_literal(self.group_name.data)
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(") : (")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list([r.type for r in self.outputs], printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=True)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        name = parser.parse_str_literal()
        unresolved = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        in_types = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        out_types = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
        inputs = [parser.resolve_operand(u, t) for u, t in zip(unresolved, in_types, strict=True)]
        body = parser.parse_region()
        op = cls(name, inputs, out_types, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


def new_block(types: Sequence[Attribute]) -> Block:
    return Block(arg_types=list(types))


# -- comparisons, bitwise logic, integer mod (ONNX GreaterOrEqual, And, Mod...) --------


@irdl_op_definition
class LessEqualOp(_Compare):
    name = "graph.less_equal"


@irdl_op_definition
class GreaterEqualOp(_Compare):
    name = "graph.greater_equal"


@irdl_op_definition
class NotEqualOp(_Compare):
    """`a != b`; true where either is NaN (so `x != x` is IsNaN)."""

    name = "graph.not_equal"


def _integer_elements(t: TensorType, op_name: str) -> TensorType:
    if not isinstance(t.get_element_type(), IntegerType):
        raise ShapeError(f"{op_name} takes integer or i1 elements, not {t.get_element_type()}")
    return t


class _Bitwise(_Binary):
    """Bitwise logic on integers; on i1 it is logical and/or/xor."""

    def infer(self, types):
        return [_integer_elements(t, self.name) for t in super().infer(types)]


@irdl_op_definition
class BitwiseAndOp(_Bitwise):
    name = "graph.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(_Bitwise):
    name = "graph.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(_Bitwise):
    name = "graph.bitwise_xor"


@irdl_op_definition
class BitwiseNotOp(_Unary):
    """`~x`; on i1, logical not."""

    name = "graph.bitwise_not"

    def infer(self, types):
        return [_integer_elements(ranked(types[0]), self.name)]


@irdl_op_definition
class ModOp(_Binary):
    """Remainder with the sign of the divisor (numpy's `%`, ONNX Mod with fmod=0):
    `a - floor(a / b) * b`. An integer zero divisor gives 0 (as numpy does); on
    floats it is numpy's `mod` (NaN for a zero divisor or an infinite dividend)."""

    name = "graph.mod"

    def infer(self, types):
        (t,) = super().infer(types)
        if t.get_element_type() == i1:
            raise ShapeError(f"{self.name} takes integer or float elements, not i1")
        return [t]


LOGIC_OPS: list[type[Operation]] = [
    LessEqualOp, GreaterEqualOp, NotEqualOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseNotOp, ModOp,
]  # fmt: skip


# -- unary math and the truncated remainder (ONNX Sin ... Round, Mod with fmod=1) ------


class _FloatUnary(_Unary):
    """An elementwise function of floating-point elements (f16, f32, f64)."""

    def infer(self, types):
        t = ranked(types[0])
        if isinstance(t.get_element_type(), IntegerType):
            raise ShapeError(f"{self.name} takes floating-point elements, not {t.get_element_type()}")
        return [t]


@irdl_op_definition
class SinOp(_FloatUnary):
    name = "graph.sin"


@irdl_op_definition
class CosOp(_FloatUnary):
    name = "graph.cos"


@irdl_op_definition
class TanOp(_FloatUnary):
    name = "graph.tan"


@irdl_op_definition
class AsinOp(_FloatUnary):
    name = "graph.asin"


@irdl_op_definition
class AcosOp(_FloatUnary):
    name = "graph.acos"


@irdl_op_definition
class AtanOp(_FloatUnary):
    name = "graph.atan"


@irdl_op_definition
class SinhOp(_FloatUnary):
    name = "graph.sinh"


@irdl_op_definition
class CoshOp(_FloatUnary):
    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(_FloatUnary):
    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(_FloatUnary):
    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(_FloatUnary):
    name = "graph.atanh"


@irdl_op_definition
class FloorOp(_FloatUnary):
    name = "graph.floor"


@irdl_op_definition
class CeilOp(_FloatUnary):
    name = "graph.ceil"


@irdl_op_definition
class RoundOp(_FloatUnary):
    """Rounds to the nearest integer, halves to the even one (ONNX Round, numpy's
    `rint`): 2.5 -> 2, -1.5 -> -2."""

    name = "graph.round"


@irdl_op_definition
class FmodOp(_Binary):
    """Remainder with the sign of the dividend (C's `fmod`, numpy's `fmod`, ONNX Mod
    with fmod=1): `a - trunc(a / b) * b`. An integer zero divisor gives 0 (numpy)."""

    name = "graph.fmod"

    def infer(self, types):
        (t,) = super().infer(types)
        if t.get_element_type() == i1:
            raise ShapeError(f"{self.name} takes integer or float elements, not i1")
        return [t]


MATH_OPS: list[type[Operation]] = [
    SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp,
    FloorOp, CeilOp, RoundOp, FmodOp,
]  # fmt: skip


GRAPH_OPS: list[type[Operation]] = [
    ReluOp, SigmoidOp, TanhOp, ErfOp, GeluOp, ExpOp, LogOp, SqrtOp, NegOp, AbsOp, ClipOp, CastOp,
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, WhereOp,
    EqualOp, LessOp, GreaterOp, BroadcastToOp,
    Conv2dOp, WinogradWeightOp, DenseOp, MatmulOp, MaxPool2dOp, AvgPool2dOp, MaxPoolIndicesOp, GlobalAvgPool2dOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, SoftmaxOp, LayerNormOp, BatchNormOp,
    PadOp, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, ConcatOp, SplitOp, SliceOp, GatherOp,
    LayoutTransformOp, ConstantOp, WeightOp, FusedOp, YieldOp,
    ReduceMinOp, ReduceProdOp, CumulativeOp, GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp,
]  # fmt: skip

GRAPH_OPS += LOGIC_OPS
GRAPH_OPS += MATH_OPS
GRAPH_OPS += [BitcastOp, RequantizeOp]

GRAPH = Dialect(
    "graph",
    GRAPH_OPS,
    [ApproximateAttr, WeightLayoutAttr, ConvAlgorithmAttr, ScatterReductionAttr, CumulativeKindAttr],
    [GraphConstantMaterialization()],
)
