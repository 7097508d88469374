"""`GraphOp`, the base of every graph op: operands declared by name with IRDL,
typed properties, the custom textual form, and verification (names and kinds of
attributes, the operand count, then the result types `infer` gives).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar
from xdsl.dialects.builtin import (
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    OptOperandDef,
    VarOperandDef,
    opt_prop_def,
    traits_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilecraft.dialects.graph.traits import GraphCanonicalization, GraphFolder
from tilecraft.dialects.graph.shapes import ShapeError, shape_of, symbolic_dims
from tilecraft.dialects.graph.properties import Prop, _is_discardable

__all__ = [
    "GraphOp", "present", "verify_attribute_names",
]  # fmt: skip


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
    # Whether `infer` is written for symbolic sizes too (dialects/graph/shapes.py);
    # an op that does not say so refuses a symbolic operand by name.
    SYMBOLIC: ClassVar[bool] = False

    @classmethod
    def check_symbolic(cls, types: Sequence[Attribute]) -> None:
        """A ShapeError if an operand has a symbolic size and this op does not take
        one, or names its `?` dimensions wrongly."""
        for n, t in enumerate(types):
            found = symbolic_dims(t)  # (which reads, and so checks, the names)
            if found and not cls.SYMBOLIC:
                k, size = found[0]
                raise ShapeError(f"{cls.name} does not take symbolic sizes (yet): operand {n} is {size} "
                                 f"at dimension {k}")  # fmt: skip

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
                try:
                    props[key] = known[key].to_attr(value)
                except ShapeError as e:
                    raise ShapeError(f"{self.name} {e}") from None
        attributes = dict(attributes or {})
        if result_types is None:
            probe = type(self).__new__(type(self))
            probe.properties, probe.attributes = props, attributes
            type(self).check_symbolic([v.type for v in inputs])
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
            self.check_symbolic([v.type for v in self.inputs])
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
            if r.type != t and not _same_symbolic(r.type, t):
                raise VerifyException(f"{self.name} result is {r.type} but its operands give {t}.")


def _same_symbolic(a: Attribute, b: Attribute) -> bool:
    """Two tensor types of one size written differently (`seq * 12`, `12 * seq`)."""
    if not (symbolic_dims(a) or symbolic_dims(b)) or not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return False
    try:
        return a.get_element_type() == b.get_element_type() and shape_of(a) == shape_of(b)
    except ShapeError:
        return False


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
