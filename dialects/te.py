"""The `te` dialect: tensor expressions, what is computed and nothing about how.

A te function is a `func.func` whose arguments are the input tensors (TVM's
placeholders) and whose results are tensors defined by `te.compute`. A compute maps
the indices of one output element to its value; its body is scalar code in `arith`
and `math` (plus `te.floormod`, the floor modulo arith lacks), reads of other tensors
with `te.read`, lazy conditionals with `scf.if`
(so padding never reads out of bounds), and at most one reduction, `te.reduce`,
whose value the body yields directly (as in TVM, a reduction is the whole body).

```mlir
func.func @matmul(%A: tensor<64x32xf32>, %B: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 32) -> f32 {
      %a = te.read %A[%i, %k] : tensor<64x32xf32>
      %b = te.read %B[%k, %j] : tensor<32x64xf32>
      %m = arith.mulf %a, %b : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<64x64xf32>
}
```

Axis names are part of the IR (not SSA name hints): schedules and the loop IR
refer to them, so they must survive printing and parsing unchanged.

A reduction's kind is an enum attribute (`ReduceKindAttr`, printed as the bare word
after `te.reduce`): a kind outside sum, max, min and prod is a parse error at the
word.

`te.read` says what upstream `tensor.extract` says (one element of a ranked tensor,
out-of-bounds undefined) with the same syntax. It stays a te op for now because
te-inline, bound inference and convert-te-to-loop (being rewritten as patterns in
parallel) recognise te reads by this op; replacing it by `tensor.extract` is a
mechanical rename to do once that rewrite lands, not a difference in meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i1,
)
from xdsl.dialects import arith
from xdsl.dialects.arith import signlessIntegerLike
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser

from tilecraft.dialects.graph.shapes import ShapeError, shape_of
from tilecraft.utils.symbolic import SymbolicSizeError, SymExpr
from tilecraft.utils.symbolic import parse as parse_size
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class ReduceKind(StrEnum):
    """How a te.reduce combines its terms."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """`#te<reduce_kind sum>` in the generic form; `te.reduce sum ...` in the custom one."""

    name = "te.reduce_kind"


REDUCE_KINDS = tuple(k.value for k in ReduceKind)


def reduce_identity(kind: str, t: Attribute) -> Operation:
    """The `arith.constant` a `kind` reduction of `t` elements starts from."""
    if isinstance(t, IntegerType):
        width = t.width.data
        lo, hi = -(2 ** (width - 1)), 2 ** (width - 1) - 1
        v = {"sum": 0, "prod": 1, "max": lo, "min": hi}[kind]
        return arith.ConstantOp(IntegerAttr(v, t))
    v = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
    return arith.ConstantOp(FloatAttr(v, t))


def reduce_combine(kind: str, acc: SSAValue, term: SSAValue) -> Operation:
    """The arith op a `kind` reduction combines its accumulator and a term with."""
    is_int = isinstance(acc.type, IntegerType)
    ops = {
        "sum": (arith.AddiOp, arith.AddfOp),
        "prod": (arith.MuliOp, arith.MulfOp),
        "max": (arith.MaxSIOp, arith.MaximumfOp),
        "min": (arith.MinSIOp, arith.MinimumfOp),
    }[kind]
    return (ops[0] if is_int else ops[1])(acc, term)


def _parse_named_axes(parser: Parser, with_bounds: bool):
    """`(%i: "i", %j: "j")` or, with bounds, `(%k: "k" = 0 to 32, ...)`."""

    def parse_one():
        arg = parser.parse_argument(expect_type=False)
        parser.parse_punctuation(":")
        name = parser.parse_str_literal()
        bounds = None
        if with_bounds:
            parser.parse_punctuation("=")
            lo = parser.parse_integer()
            parser.parse_keyword("to")
            pos = parser.pos
            text = parser.parse_optional_str_literal()
            hi: int | SymExpr = parser.parse_integer() if text is None else _size(text, parser, pos)
            bounds = (lo, hi)
        return arg, name, bounds

    return parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_one)


def _print_named_axes(printer: Printer, args, names, bounds=None):
    printer.print_string("(")
    for n, (arg, name) in enumerate(zip(args, names)):
        if n:
            printer.print_string(", ")
        printer.print_ssa_value(arg)
        printer.print_string(": ")
        printer.print_string_literal(name)
        if bounds is not None:
            lo, hi = bounds[n]
            printer.print_string(f" = {lo} to ")
            if isinstance(hi, int):
                printer.print_string(str(hi))
            else:
                printer.print_string_literal(str(hi))
    printer.print_string(")")


def _size(text: str, parser: Parser, pos: int) -> SymExpr:
    try:
        return parse_size(text)
    except SymbolicSizeError as e:
        parser.raise_error(str(e), pos, parser.pos)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `te.compute` or `te.reduce` body with the element it computes.

    `te.yield %v : f32`
    """

    name = "te.yield"
    value = operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ComputeOp, ReduceOp)))
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value])


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """A tensor defined element by element: `te.compute "C" (%i: "i") -> tensor<8xf32> {...}`.

    The body's block arguments are the output indices (one `index` per dimension,
    named by `axis_names`); it ends with `te.yield` of one element of the result's
    element type.
    """

    name = "te.compute"
    tensor_name = prop_def(StringAttr, prop_name="name")
    axis_names = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())

    def __init__(
        self,
        name: str,
        axis_names: Sequence[str],
        result_type: TensorType,
        body: Region,
    ):
        super().__init__(
            properties={
                "name": StringAttr(name),
                "axis_names": ArrayAttr([StringAttr(a) for a in axis_names]),
            },
            result_types=[result_type],
            regions=[body],
        )

    @property
    def names(self) -> list[str]:
        return [a.data for a in self.axis_names.data]

    @property
    def shape(self) -> tuple:
        """Its sizes: ints, and a `SymExpr` for each `?` (named by the type's encoding)."""
        return shape_of(self.result.type)

    @property
    def yielded(self) -> SSAValue:
        term = self.body.block.last_op
        assert isinstance(term, YieldOp)
        return term.value

    @property
    def reduce(self) -> ReduceOp | None:
        owner = self.yielded.owner
        return owner if isinstance(owner, ReduceOp) else None

    def verify_(self) -> None:
        rtype = self.result.type
        assert isinstance(rtype, TensorType)
        rank = len(rtype.get_shape())
        block = self.body.block
        if len(block.args) != rank:
            raise VerifyException(
                f"te.compute '{self.tensor_name.data}' has {len(block.args)} index "
                f"arguments but its result has rank {rank}."
            )
        if len(self.axis_names.data) != rank:
            raise VerifyException(
                f"te.compute '{self.tensor_name.data}' names {len(self.axis_names.data)} "
                f"axes but its result has rank {rank}."
            )
        try:
            shape = shape_of(rtype)
        except ShapeError as e:
            raise VerifyException(f"te.compute '{self.tensor_name.data}': {e}") from None
        if any(isinstance(d, int) and d <= 0 for d in shape):
            raise VerifyException(
                f"te.compute '{self.tensor_name.data}' needs positive extents (or '?' "
                "sizes named by the type's encoding: tensor<?x8xf32, [\"n\"]>)."
            )
        for arg in block.args:
            if not isinstance(arg.type, IndexType):
                raise VerifyException("te.compute index arguments must be of type index.")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("te.compute body must end with te.yield.")
        if block.last_op.value.type != rtype.get_element_type():
            raise VerifyException(
                f"te.compute '{self.tensor_name.data}' yields "
                f"{block.last_op.value.type} but its result holds "
                f"{rtype.get_element_type()}."
            )
        _check_unique_axis_names(self)
        for op in self.body.walk():
            if isinstance(op, ReduceOp) and op is not self.reduce:
                raise VerifyException(
                    f"te.reduce in te.compute '{self.tensor_name.data}' must be the "
                    "value the body yields (a reduction is the whole body, as in TVM); "
                    "compute the rest in a second te.compute."
                )

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_string_literal(self.tensor_name.data)
        printer.print_string(" ")
        _print_named_axes(printer, self.body.block.args, self.names)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ComputeOp:
        name = parser.parse_str_literal()
        axes = _parse_named_axes(parser, with_bounds=False)
        parser.parse_punctuation("->")
        rtype = parser.parse_type()
        args = [arg.resolve(IndexType()) for arg, _, _ in axes]
        body = parser.parse_region(args)
        op = cls(name, [n for _, n, _ in axes], rtype, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


def _check_unique_axis_names(compute: ComputeOp):
    names = list(compute.names)
    if compute.reduce is not None:
        names += compute.reduce.names
    seen = set()
    for n in names:
        if n in seen:
            raise VerifyException(
                f"te.compute '{compute.tensor_name.data}' uses the axis name '{n}' twice."
            )
        seen.add(n)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A reduction over named axes: `te.reduce sum (%k: "k" = 0 to 32) -> f32 {...}`.

    `kind` is sum, max, min or prod (`kind.data` is the `ReduceKind`, equal to its
    word); the body's block arguments are the reduce axes, each iterating over
    `[lo, hi)`; the body yields the term to combine.
    """

    name = "te.reduce"
    kind = prop_def(ReduceKindAttr)
    axis_names = prop_def(ArrayAttr[StringAttr])
    lower = prop_def(ArrayAttr[IntAttr])
    upper = prop_def(ArrayAttr[IntAttr | StringAttr])  # a string: a size known when it runs
    result = result_def()
    body = region_def("single_block")
    traits = traits_def(HasParent(ComputeOp), Pure())

    def __init__(
        self,
        kind: str,
        axis_names: Sequence[str],
        bounds: Sequence[tuple[int, int | SymExpr]],
        result_type: Attribute,
        body: Region,
    ):
        super().__init__(
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                "axis_names": ArrayAttr([StringAttr(a) for a in axis_names]),
                "lower": ArrayAttr([IntAttr(lo) for lo, _ in bounds]),
                "upper": ArrayAttr([IntAttr(hi) if isinstance(hi, int) else StringAttr(str(hi)) for _, hi in bounds]),
            },
            result_types=[result_type],
            regions=[body],
        )

    @property
    def names(self) -> list[str]:
        return [a.data for a in self.axis_names.data]

    @property
    def bounds(self) -> list[tuple[int, int | SymExpr]]:
        """[lo, hi) of each axis; `hi` is a SymExpr where it is known only when the
        program runs (`(%k: "k" = 0 to "seq")`)."""
        return [
            (lo.data, hi.data if isinstance(hi, IntAttr) else parse_size(hi.data))
            for lo, hi in zip(self.lower.data, self.upper.data)
        ]

    @property
    def yielded(self) -> SSAValue:
        term = self.body.block.last_op
        assert isinstance(term, YieldOp)
        return term.value

    def verify_(self) -> None:
        block = self.body.block
        n = len(block.args)
        if n == 0 or any(
            len(names) != n
            for names in (self.axis_names.data, self.lower.data, self.upper.data)
        ):
            raise VerifyException(
                "te.reduce needs one named, bounded index argument per reduce axis."
            )
        try:
            bounds = self.bounds
        except SymbolicSizeError as e:
            raise VerifyException(f"te.reduce: {e}") from None
        for name, (lo, hi) in zip(self.names, bounds):
            if isinstance(hi, int) and hi <= lo:
                raise VerifyException(
                    f"te.reduce axis '{name}' has an empty range [{lo}, {hi})."
                )
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("te.reduce body must end with te.yield.")
        if block.last_op.value.type != self.result.type:
            raise VerifyException(
                f"te.reduce yields {block.last_op.value.type} but its result is "
                f"{self.result.type}."
            )

    def print(self, printer: Printer):
        printer.print_string(f" {self.kind.data} ")
        _print_named_axes(printer, self.body.block.args, self.names, self.bounds)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parser.parse_str_enum(ReduceKind)
        axes = _parse_named_axes(parser, with_bounds=True)
        parser.parse_punctuation("->")
        rtype = parser.parse_type()
        args = [arg.resolve(IndexType()) for arg, _, _ in axes]
        body = parser.parse_region(args)
        op = cls(kind, [n for _, n, _ in axes], [b for _, _, b in axes], rtype, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class ReadOp(IRDLOperation):
    """One element of a tensor: `%a = te.read %A[%i, %k] : tensor<64x32xf32>`.

    Indices outside the tensor are undefined behaviour, as in TVM; guard them with
    `scf.if` (which is lazy) rather than `arith.select` (which is not).
    """

    name = "te.read"
    ELEMENT: ClassVar = VarConstraint("ELEMENT", AnyAttr())
    tensor = operand_def(TensorType.constr(ELEMENT))
    indices = var_operand_def(IndexType)
    result = result_def(ELEMENT)
    traits = traits_def(Pure())
    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue, indices: Sequence[SSAValue]):
        assert isinstance(tensor.type, TensorType)
        super().__init__(
            operands=[tensor, indices],
            result_types=[tensor.type.get_element_type()],
        )

    def verify_(self) -> None:
        ttype = self.tensor.type
        assert isinstance(ttype, TensorType)
        if len(self.indices) != len(ttype.get_shape()):
            raise VerifyException(
                f"te.read of a rank-{len(ttype.get_shape())} tensor takes "
                f"{len(ttype.get_shape())} indices, not {len(self.indices)}."
            )


@irdl_op_definition
class FloorModOp(IRDLOperation):
    """Floor modulo: `%r = te.floormod %a, %b : index`, the remainder of
    `arith.floordivsi` (`%a - floordivsi(%a, %b) * %b`), with the sign of `%b`.

    What Python and TVM mean by `%`: `-1 mod 4` is 3 (`arith.remsi` gives -1). arith has
    no such op, so te keeps it as one op, which bound inference reads as a modulo and
    convert-te-to-loop expands into arith. Modulo zero is 0 (numpy's convention), as
    every integer division in tilecraft's IR is (see `backends/llvm/ops.py`).
    """

    name = "te.floormod"
    T: ClassVar = VarConstraint("T", signlessIntegerLike)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


@irdl_op_definition
class AssertOp(IRDLOperation):
    """`te.assert %ok, "message"`: a run-time check in a compute's body. Where
    `%ok` (i1) is false for an element computed, calling the function fails with
    `message` (an exception from the Python call, exit 1 from the tools); the
    body's value is still computed, so keep its reads in bounds by themselves
    (gather clamps the id it checks). convert-te-to-loop makes it `loop.assert`.
    """

    name = "te.assert"
    cond = operand_def(i1)
    message = prop_def(StringAttr)
    assembly_format = "$cond `,` $message attr-dict"

    def __init__(self, cond: SSAValue, message: str | StringAttr):
        if isinstance(message, str):
            message = StringAttr(message)
        super().__init__(operands=[cond], properties={"message": message})


def compute_ops(func_op: Operation) -> list[ComputeOp]:
    """The te.compute ops of a function, in program (= dependence) order."""
    return [op for op in func_op.walk() if isinstance(op, ComputeOp)]


def new_block(n_index_args: int) -> Block:
    return Block(arg_types=[IndexType()] * n_index_args)


@irdl_op_definition
class SizeOp(IRDLOperation):
    """A size known when the program runs, as a value: `%n = te.size "n"` (a
    `te.var` size used in an expression). The function reads it from an
    argument that has it as a whole dimension."""

    name = "te.size"
    size_name = prop_def(StringAttr, prop_name="name")
    result = result_def(IndexType())
    traits = traits_def(Pure())
    assembly_format = "$name attr-dict"

    def __init__(self, name: str):
        super().__init__(properties={"name": StringAttr(name)}, result_types=[IndexType()])

    def verify_(self) -> None:
        try:
            SymExpr.lift(self.size_name.data)
        except SymbolicSizeError as e:
            raise VerifyException(f"te.size: {e}") from None


TE = Dialect("te", [ComputeOp, ReduceOp, ReadOp, YieldOp, FloorModOp, AssertOp, SizeOp], [ReduceKindAttr])
