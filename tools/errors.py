"""How every tilecraft tool ends: one handler, so the same error reads the same in
each of them.

    def main(argv=None) -> int:
        args = make_arg_parser().parse_args(argv)   # a bad command line: exit 1
        return run_tool(PROG, lambda: run(args), argv)

A mistake of the user's (a bad command line or input file, IR that does not parse
or verify, a damaged weight store or tuning log, a model tilecraft cannot import)
is one diagnostic on stderr and exit code 1:

    file:line:col: error: ...            (IR at fault: the op, or the token marked below)
    tilecraft-run: error: cannot read 'x.npy': no such file
    tilecraft-run: error: ...            (anything else)

A bug in tilecraft is one line `PROG: internal error: Type: message (rerun with
--traceback and report it)` and exit code 2; `--traceback` (every tool has it)
prints the Python traceback first. Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.utils.exceptions import DiagnosticException, ParseError

EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 2
EXIT_INTERRUPTED = 130

# A diagnostic that already names its place: `file:line:col: error:` (OpError,
# xDSL's located diagnostics) or `<unknown>: error:` (an op without a location).
_LOCATED = re.compile(r"^(\S+:\d+:\d+|<unknown>): error: ")


class UserError(Exception):
    """A mistake in the command line or the input files; printed as one line."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad command line a user error: exit code 1 (argparse uses 2,
    which the tools keep for internal errors)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}\n")


def _reason(error: OSError, writing: bool = False) -> str:
    """Why a file could not be opened, in the words the ONNX importer uses too."""
    if isinstance(error, FileNotFoundError):
        return "no such directory" if writing else "no such file"
    if isinstance(error, IsADirectoryError):
        return "it is a directory"
    text = error.strerror or str(error)
    return text[:1].lower() + text[1:]


@contextmanager
def writing(path) -> Iterator[None]:
    """Turn a failure to write `path` into `cannot write 'PATH': why` (any other
    OSError a tool meets is a file it cannot read)."""
    try:
        yield
    except OSError as e:
        raise UserError(f"cannot write '{path}': {_reason(e, writing=True)}") from None


def add_traceback_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--traceback", action="store_true", help="on an internal error, print the Python traceback"
    )


# tilecraft's exceptions that mean bad input, not a bug, by the module that defines
# each (besides UserError).
_USER_ERRORS = (
    ("tilecraft.frontends.onnx.importer", "OnnxImportError"),
    ("tilecraft.utils.weights", "WeightError"),
    ("tilecraft.utils.threads", "ThreadCountError"),
    ("tilecraft.autotune.records", "TuningLogError"),
    ("tilecraft.backends.llvm.emit", "LinkError"),
    ("tilecraft.backends.llvm.translate", "TranslationError"),
    ("tilecraft.runtime.saved", "SavedModelError"),
    ("tilecraft.analysis.framework", "AnalysisError"),
    ("tilecraft.analysis.machine", "MachineError"),
)


def user_error_types() -> tuple[type[BaseException], ...]:
    """tilecraft's exceptions that mean bad input, not a bug: printed as
    `PROG: error: message`. Only those whose module is loaded: an exception (or
    a subclass of it) can only have been raised if the module defining it was
    imported, and importing the others (onnx, llvmlite) to report an error would
    cost a failing command more than half a second."""
    types: list[type[BaseException]] = [UserError]
    for module, name in _USER_ERRORS:
        error_type = getattr(sys.modules.get(module), name, None)
        if error_type is not None:
            types.append(error_type)
    return tuple(types)


def describe(prog: str, error: BaseException) -> tuple[str, int] | None:
    """The message and exit code for a user's mistake, or None for a bug."""
    from tilecraft.utils.diagnostics import NESTING_TOO_DEEP, format_parse_error

    if isinstance(error, ParseError):
        return format_parse_error(error), EXIT_USER_ERROR
    if isinstance(error, UnicodeDecodeError):  # (a ValueError)
        where = f" at byte {error.start}" if error.start is not None else ""
        return f"{prog}: error: the input is not UTF-8 text ({error.reason}{where})", EXIT_USER_ERROR
    if isinstance(error, RecursionError):
        return f"{prog}: error: {NESTING_TOO_DEEP}", EXIT_USER_ERROR
    if isinstance(error, OSError):  # a missing or unreadable file, a directory, ...
        if error.filename is None:
            return f"{prog}: error: {error.strerror or error}", EXIT_USER_ERROR
        return f"{prog}: error: cannot read '{error.filename}': {_reason(error)}", EXIT_USER_ERROR
    if isinstance(error, user_error_types()):
        return f"{prog}: error: {str(error).strip()}", EXIT_USER_ERROR
    if isinstance(error, DiagnosticException):  # verifier and pass errors, plugins
        text = str(error).strip()
        return (text if _LOCATED.match(text) else f"{prog}: error: {text}"), EXIT_USER_ERROR
    return None


def run_tool(
    prog: str,
    body: Callable[[], int | None],
    argv: Sequence[str] | None = None,
    *,
    interrupted: str = "interrupted",
) -> int:
    """Run a tool's `body` and turn whatever it raises into its diagnostic and exit
    code (the module docstring). `argv` is the command line (`--traceback`);
    `interrupted` what Ctrl-C prints after `PROG: `."""
    from tilecraft.utils.diagnostics import allow_deep_nesting
    from tilecraft.utils.gc_pause import fewer_collections

    argv = sys.argv[1:] if argv is None else list(argv)
    allow_deep_nesting()
    try:
        with fewer_collections():  # a tool's whole run is a compile (utils/gc_pause.py)
            return body() or 0
    except SystemExit as e:
        # argparse exits 2 on a bad command line (xDSL's driver builds a plain
        # parser); tilecraft's tools keep 2 for internal errors.
        if e.code is None or isinstance(e.code, int):
            return EXIT_USER_ERROR if e.code == 2 else (e.code or 0)
        raise
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        try:
            known = describe(prog, e)
        except Exception:  # noqa: BLE001 - describing must not hide the error itself
            known = None
        if known is not None:
            message, code = known
            print(message, file=sys.stderr)
            return code
        if "--traceback" in argv:
            traceback.print_exc()
        print(
            f"{prog}: internal error: {type(e).__name__}: {e} (rerun with --traceback and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL_ERROR
