"""`tilecraft-translate`: IR in, LLVM IR / assembly / object / shared library out.

    tilecraft-translate kernel.mlir --emit=asm            # to stdout
    tilecraft-translate kernel.mlir --emit=obj -o kernel.o
    tilecraft-translate kernel.mlir --emit=shared-lib -o libkernel.so

The input is loop-level IR, te-level IR (lowered to loops first, with the same
passes as `tilecraft.lower`), or IR already in the llvm dialect. Code is
generated for the host CPU through the LLVM backend (`tilecraft.backends.llvm`).
Every user error (unreadable file, bad IR, an op the backend does not support, a
failed link) is one line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError

EMITTERS = ("llvm-ir", "asm", "obj", "shared-lib")


def _arguments() -> argparse.ArgumentParser:
    from tilecraft.tools.run import ArgumentParser  # usage errors exit 1

    parser = ArgumentParser(
        prog="tilecraft-translate",
        description="Translate loop- or te-level IR to LLVM IR, assembly, an object file "
        "or a shared library for the host CPU.",
    )
    parser.add_argument("input", help="input IR file ('-' for stdin)")
    parser.add_argument(
        "--emit", choices=EMITTERS, default="llvm-ir", help="what to produce (default: llvm-ir)"
    )
    parser.add_argument(
        "-o", "--output", help="output file (default: stdout; required for shared-lib)"
    )
    parser.add_argument(
        "--no-opt", action="store_true", help="with --emit=llvm-ir: print the IR before LLVM's O3"
    )
    parser.add_argument(
        "--num-threads",
        type=_thread_count,
        default=None,
        help="threads for parallel loops (default: OMP_NUM_THREADS, else the CPUs "
        "this process may run on)",
    )
    parser.add_argument(
        "--traceback", action="store_true", help="on an internal error, print the Python traceback"
    )
    return parser


def _thread_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _load(path: str):
    from tilecraft.compiler import has_te, lower_to_loops, parse_file, parse_text
    from tilecraft.utils.diagnostics import OpError
    from xdsl.dialects import func

    from tilecraft.utils.levels import function_level

    module = parse_text(sys.stdin.read(), "<stdin>") if path == "-" else parse_file(path)
    for f in module.ops:
        level, op = function_level(f) if isinstance(f, func.FuncOp) else ("llvm", f)
        if level == "graph" and op is not f:
            raise OpError(
                op,
                f"tilecraft-translate: the input is graph-level IR ('{op.name}'), a model; it takes "
                "te, loop or llvm IR: lower the model with tilecraft-opt -p compile-model first",
            )
    if has_te(module):
        module = lower_to_loops(module)
    return module


def _translate(args: argparse.Namespace) -> None:
    from tilecraft import compiler as backend

    module = _load(args.input)
    if args.emit == "shared-lib":
        if not args.output:
            raise UsageError("--emit=shared-lib needs an output file (-o)")
        backend.emit_shared_library(module, args.output, args.num_threads)
        return
    if args.emit == "obj":
        data: bytes | str = backend.emit_object(module, args.num_threads)
    elif args.emit == "asm":
        data = backend.emit_assembly(module, args.num_threads)
    else:
        data = backend.emit_llvm_ir(module, optimize=not args.no_opt, num_threads=args.num_threads)
    if args.output:
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(args.output, mode) as out:
            out.write(data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data)


class UsageError(Exception):
    """A bad command line; printed without a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    from tilecraft.backends.llvm import LinkError
    from tilecraft.backends.llvm.translate import TranslationError
    from tilecraft.utils.diagnostics import NESTING_TOO_DEEP, allow_deep_nesting, format_parse_error
    from tilecraft.utils.threads import ThreadCountError

    allow_deep_nesting()
    try:
        _translate(args)
    except UsageError as e:
        print(f"tilecraft-translate: error: {e}", file=sys.stderr)
        return 1
    except ParseError as e:
        print(format_parse_error(e), file=sys.stderr)
        return 1
    except DiagnosticException as e:
        print(str(e).rstrip(), file=sys.stderr)
        return 1
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"tilecraft-translate: error: {e.strerror}: '{e.filename}'", file=sys.stderr)
        return 1
    except (LinkError, TranslationError, ThreadCountError) as e:
        print(f"tilecraft-translate: error: {e}", file=sys.stderr)
        return 1
    except RecursionError:
        print(f"tilecraft-translate: error: {NESTING_TOO_DEEP}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as e:
        print(f"tilecraft-translate: error: the input is not UTF-8 text ({e.reason})", file=sys.stderr)
        return 1
    except Exception as e:
        if args.traceback:
            traceback.print_exc()
        print(
            f"tilecraft-translate: internal error: {type(e).__name__}: {e} "
            "(rerun with --traceback and report it)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
