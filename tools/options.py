"""Command-line options that mean the same in every tool that reads or compiles a
model: one spelling, one parser, one message.

- `--input-shape NAME=1x3x224x224` fixes the dynamic dimensions of an ONNX model's
  input (repeatable; `NAME=1,3,224,224` is the same, and `NAME=` a scalar).
  tilecraft-import, tilecraft-run and tilecraft-tune take it; an IR file has static
  shapes and refuses it.
- `--tuning-log PATH` compiles each tuned workload with its best record in a
  tilecraft-tune log (as `tc.compile(model, tuning_log=PATH)`): tilecraft-opt and
  tilecraft-run take it.
- `--version` (every tool; tilecraft-opt's `-v` too) prints tilecraft's version and
  the xDSL it is built on.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tilecraft.tools.errors import UserError

INPUT_SHAPE_METAVAR = "NAME=D1xD2x..."
INPUT_SHAPE_HELP = (
    "fix the shape of a model input with dynamic dimensions, e.g. x=1x3x224x224 "
    "(or x=1,3,224,224; x= for a scalar); repeatable"
)
TUNING_LOG_HELP = (
    "a tilecraft-tune log: each conv2d/dense/matmul/... workload it tuned is scheduled "
    "with its best record (as tc.compile(model, tuning_log=PATH))"
)
STATIC_SHAPES = "--input-shape fixes the inputs of an ONNX model; an IR file has static shapes"


def version_format(prog: str) -> str:
    """`version_text` with xDSL's version left as the field `{xdsl_version}`
    (xDSL's driver fills it in when tilecraft-opt is asked for its version)."""
    from tilecraft import __version__

    return f"{prog} from tilecraft {__version__}, on xDSL {{xdsl_version}}"


def version_text(prog: str) -> str:
    """`tilecraft-run from tilecraft 0.1.0, on xDSL 0.74.0`"""
    from importlib.metadata import version

    return version_format(prog).format(xdsl_version=version("xdsl"))


class _VersionAction(argparse.Action):
    """`--version`: prints `version_text` and exits. The text is made only when
    asked: reading xDSL's version imports importlib.metadata, which every run of
    a tool would pay for otherwise."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text(parser.prog))
        parser.exit()


def add_version_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action=_VersionAction, help="print tilecraft's version and exit")


def add_input_shape_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-shape", action="append", default=[], metavar=INPUT_SHAPE_METAVAR, help=INPUT_SHAPE_HELP
    )


def add_tuning_log_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tuning-log", metavar="PATH", help=TUNING_LOG_HELP)


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`x=1x3x224x224` or `x=1,3,224,224` -> ("x", (1, 3, 224, 224)); `x=` -> ("x", ()).
    The name is everything before the last `=` (ONNX names may hold one)."""
    name, eq, dims = text.rpartition("=")
    try:
        if not eq or not name:
            raise ValueError
        dims = dims.strip()
        shape = tuple(int(d) for d in dims.replace(",", "x").split("x")) if dims else ()
        if any(d <= 0 for d in shape):
            raise ValueError
    except ValueError:
        raise UserError(
            f"bad --input-shape '{text}': write NAME=D1xD2x... (or NAME=D1,D2,...) with positive "
            "extents, e.g. x=1x3x224x224"
        ) from None
    return name, shape


def input_shapes(texts: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """The `--input-shape` options as `tc.compile`'s `input_shapes`."""
    shapes: dict[str, tuple[int, ...]] = {}
    for text in texts:
        name, shape = parse_input_shape(text)
        if name in shapes:
            raise UserError(f"--input-shape gives input '{name}' twice")
        shapes[name] = shape
    return shapes


def check_tuning_log(path: str | Path) -> Path:
    """A user error for a `--tuning-log` that is not a file (tc.compile would run
    untuned without a word)."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"cannot read the tuning log '{path}': it is a directory")
    if not path.is_file():
        raise UserError(f"cannot read the tuning log '{path}': no such file")
    return path


def tuning_lookup(path: str | Path, target: str = "llvm", *, skip_invalid: bool = True):
    """The tuning context of a `--tuning-log` (autotune/tasks.py's LogLookup).
    `skip_invalid`: as tc.compile, pass over records that are not configs of the
    current templates; without, the schedule refuses them with a diagnostic."""
    from tilecraft.autotune.tasks import LogLookup

    return LogLookup(str(check_tuning_log(path)), target, skip_invalid=skip_invalid)
