"""Typed properties of graph ops (`Ints`, `Int`, `Bool`, `Float`, `Str`, `Type`,
`Enum`): `op.strides` is a Python value or its default, and the verifier names a
missing, misspelled or ill-typed one; and the enum attributes for closed sets of
words (`#graph<approximate tanh>`, `#graph<conv_algorithm winograd>`, ...).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import ClassVar
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    i1,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SpacedOpaqueSyntaxAttribute, TypeAttribute
from xdsl.irdl import (
    AttrConstraint,
    BaseAttr,
    EqAttrConstraint,
    VerificationContext,
    irdl_attr_definition,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from tilecraft.dialects.graph.shapes import ShapeError

__all__ = [
    "REQUIRED", "Prop", "Ints", "Int", "Bool", "Float", "Str", "Type", "Enum", "Approximate", "ApproximateAttr",
    "WeightLayout", "PANEL", "dense_weight_nk", "WeightLayoutAttr", "ConvAlgorithm", "ConvAlgorithmAttr",
    "ScatterReduction", "ScatterReductionAttr", "CumulativeKind", "CumulativeKindAttr",
]  # fmt: skip


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
        if isinstance(value, Attribute):
            return value
        try:
            return self.attr(self.attr.enum_type(value))
        except ValueError:
            words = ", ".join(str(e.value) for e in self.attr.enum_type)
            raise ShapeError(f"attribute '{self.name}' must be one of {words}, not '{value}'") from None


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
