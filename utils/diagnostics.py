"""Diagnostics that point at the op: file:line:col, a message, exit code 1.

xDSL's parser only records a location when the text spells `loc(...)`. Every tool
in tilecraft parses with `LocatedParser`, which stamps each op with the
`FileLineColLoc` of its first token, so a verifier or a pass can name the place of
the op it rejects. Errors raised against an op use `OpError`; the drivers turn it
(and xDSL's own verify/parse errors) into one line `file:line:col: error: ...`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException


class OpError(DiagnosticException):
    """A user-facing error about one op; `str()` gives `file:line:col: error: ...`."""

    def __init__(self, op: Operation | None, message: str):
        self.op = op
        self.message = message
        super().__init__(f"{location_of(op)}: error: {message}")


class EvaluationError(OpError):
    """A numpy evaluator (the te reference, the graph ops' meaning) cannot evaluate
    an op: an unknown op, a read out of bounds."""


class LocatedParser(Parser):
    """A parser that records `file:line:col` of every op it reads."""

    def __init__(self, ctx, text: str | bytes, name: str = "<stdin>", line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._file_name = name
        self._line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as e:
            # A declarative assembly format checks operand types while it parses
            # and raises a VerifyException that knows no location: give it one.
            self.raise_error(str(e), start)
        if isinstance(op.location, UnknownLoc):
            line, col = _line_col(start.input.content, start.start)
            op.location = FileLineColLoc(
                StringAttr(self._file_name),
                IntAttr(line + self._line_offset),
                IntAttr(col),
            )
        return op


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def location_of(op: Operation | None) -> str:
    """The nearest known `file:line:col` of `op` or of an op enclosing it."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        op = op.parent_op()
    return "<unknown>"


def verify_module(root: Operation) -> None:
    """Verify `root` and everything in it, innermost ops first, like `op.verify()`,
    but raise an `OpError` that names the op at fault."""
    for region in root.regions:
        for block in region.blocks:
            for op in block.ops:
                verify_module(op)
    try:
        root.verify(verify_nested_ops=False)
    except VerifyException as e:
        message = str(e.args[0]) if e.args else str(e)
        raise OpError(root, f"'{root.name}' op: {message}") from None
