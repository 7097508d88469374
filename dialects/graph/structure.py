"""Values without operands (`graph.constant`, `graph.weight`) and fused groups
(`graph.fused`, `graph.yield`).
"""

from __future__ import annotations

from collections.abc import Sequence
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    ConstantLike,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from tilecraft.dialects.graph.op import verify_attribute_names

__all__ = [
    "ConstantOp", "WeightOp", "YieldOp", "FusedOp", "new_block",
]  # fmt: skip


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
