"""Diagnostics that point at the op: file:line:col, a message, exit code 1.

xDSL's parser only records a location when the text spells `loc(...)`. Every tool
in tilecraft parses with `LocatedParser`, which stamps each op with the
`FileLineColLoc` of its first token, so a verifier or a pass can name the place of
the op it rejects. Errors raised against an op use `OpError`; the drivers turn it
(and xDSL's own verify/parse errors) into one line `file:line:col: error: ...`.
"""

from __future__ import annotations

import bisect
import re

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind


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
    """A parser that records `file:line:col` of every op it reads.

    It also words three errors of xDSL's parser for people: a file with nothing but
    comments or blanks is "empty" (not "Could not parse entire input"); a
    value used but never defined is reported at its first use, not at the end of
    the file; and a file that ends inside a region (a truncated file) says which
    ops' regions are still open and where each opens, not " in block
    definition". To say so it keeps the stack of regions being parsed."""

    def __init__(self, ctx, text: str | bytes, name: str = "<stdin>", line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._file_name = name
        self._line_offset = line_offset
        self._first_use: dict[str, Span] = {}
        self._op_starts: list[Span] = []  # the first token of each op being parsed
        self._open: list[tuple[Span, Span]] = []  # (its op's start, its '{') per open region
        self._open_at_error: list[tuple[Span, Span]] | None = None

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            what = "empty" if not self._current_token.span.input.content.strip() else "only comments"
            self.raise_error(
                f"the file is {what}: there is no IR to read (a module, or ops such as func.func)",
                self._current_token.span,
            )
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            undefined = [n for n in self.forward_ssa_references if n in self._first_use]
            if not undefined or "values used but not defined" not in e.msg:
                at_end = self._current_token.kind == MLIRTokenKind.EOF
                if at_end and type(e) is ParseError and not e.msg.startswith("the file ends"):
                    # Stopped at the end of the file: a truncated file, most likely.
                    raise ParseError(e.span, self._ends_early(e.msg.strip())) from None
                raise
            first = min(undefined, key=lambda n: self._first_use[n].start)
            others = [f"%{n}" for n in undefined if n != first]
            also = f" (also undefined: {', '.join(others)})" if others else ""
            self.raise_error(f"use of undefined value %{first}{also}", self._first_use[first])

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute):
        name = operand.operand_name
        if name not in self.ssa_values and name not in self._first_use:
            self._first_use[name] = operand.span
        return super().resolve_operand(operand, type)

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        self._op_starts.append(start)
        try:
            op = super().parse_operation()
        except VerifyException as e:
            # A declarative assembly format checks operand types while it parses
            # and raises a VerifyException that knows no location: give it one.
            self.raise_error(str(e), start)
        finally:
            self._op_starts.pop()
        if isinstance(op.location, UnknownLoc):
            line, col = self._line_col(start.input.content, start.start)
            op.location = FileLineColLoc(
                StringAttr(self._file_name),
                IntAttr(line + self._line_offset),
                IntAttr(col),
            )
        return op


    def parse_optional_region(self, arguments=None):
        if self._current_token.kind != MLIRTokenKind.L_BRACE or not self._op_starts:
            return super().parse_optional_region(arguments)
        self._open.append((self._op_starts[-1], self._current_token.span))
        try:
            return super().parse_optional_region(arguments)
        except ParseError:
            # The innermost region sees an error first; only one at the end of the
            # file is said to be inside the open regions.
            if self._open_at_error is None and self._current_token.kind == MLIRTokenKind.EOF:
                self._open_at_error = list(self._open)
            raise
        finally:
            self._open.pop()

    def _parse_block(self):
        # After the ops of a region comes its '}' or a block label (^bb1:); xDSL
        # then expects a label and says only " in block definition".
        token = self._current_token
        if token.kind != MLIRTokenKind.CARET_IDENT and self._open:
            if token.kind == MLIRTokenKind.EOF:
                self._open_at_error = list(self._open)
                self.raise_error(self._ends_early(""), token.span)
            op, brace = self._open[-1]
            self.raise_error(
                f"expected an operation or the '}}' that closes the region of "
                f"{self._op_name(op, brace)} (opened at {self._where(brace)}), got '{token.text}'",
                token.span,
            )
        return super()._parse_block()

    def _ends_early(self, message: str) -> str:
        """`message` for an error at the end of the file, with the regions still open."""
        open_regions = self._open_at_error or []
        if not open_regions:
            return f"the file ends early: {message} (is the file truncated?)"
        inside = ", inside ".join(
            f"{self._op_name(op, brace)} (its region opens at {self._where(brace)})"
            for op, brace in reversed(open_regions)
        )
        n = len(open_regions)
        missing = "a '}' is missing" if n == 1 else f"{n} '}}' are missing"
        before = f"{message}: " if message else ""
        return f"{before}the file ends inside {inside}: {missing} (is the file truncated?)"

    @staticmethod
    def _op_name(start: Span, brace: Span) -> str:
        """The name of the op whose text runs from `start` to its region's `brace`."""
        text = start.input.content[start.start : brace.start]
        found = re.match(r'\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$.]*)', text)
        return f"'{found.group(1)}'" if found else "an op"

    def _where(self, span: Span) -> str:
        line, col = self._line_col(span.input.content, span.start)
        return f"{line + self._line_offset}:{col}"

    def _line_col(self, text: str, offset: int) -> tuple[int, int]:
        """1-based line and column of `offset`, by bisecting the text's line starts
        (found once: counting newlines per op made big files quadratic to parse)."""
        if getattr(self, "_starts_of", None) is not text:
            self._starts_of = text
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1


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
    sym_name = root.properties.get("sym_name") or root.attributes.get("sym_name")
    if isinstance(sym_name, StringAttr) and not sym_name.data:
        raise OpError(root, f"'{root.name}' op: the symbol name is empty; name it (@name)")
    try:
        root.verify(verify_nested_ops=False)
    except VerifyException as e:
        message = str(e.args[0]) if e.args else str(e)
        raise OpError(root, f"'{root.name}' op: {message}") from None
    except DiagnosticException:
        raise
    except Exception as e:  # noqa: BLE001 - some of xDSL's verifiers raise bare exceptions
        detail = str(e) if type(e) is Exception else f"{type(e).__name__}: {e}"
        raise OpError(root, f"'{root.name}' op: {detail}") from None


def format_parse_error(e: ParseError) -> str:
    """`file:line:col: error: message`, then the line with the token marked."""
    location, _, context = str(e).partition("\n")
    # xDSL repeats the message under the marked line: once is enough.
    context = context.rstrip()
    if context.endswith(e.msg):
        context = context[: -len(e.msg)].rstrip()
    return f"{location}: error: {e.msg}\n{context}".rstrip()


# Parsing, verifying and lowering recurse once or more per nesting level (xDSL's
# parser takes ~7 frames per region): Python's default limit of 1000 stops at
# ~140 nested loops. The tools raise it; past it they report `NESTING_TOO_DEEP`.
RECURSION_LIMIT = 20000
NESTING_TOO_DEEP = (
    "the input nests too deeply (regions inside regions past Python's recursion limit "
    f"of {RECURSION_LIMIT}); flatten it, e.g. fuse loops"
)


def allow_deep_nesting() -> None:
    """Let the tools handle ~1,000 nested regions (see `RECURSION_LIMIT`)."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
