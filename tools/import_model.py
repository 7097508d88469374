"""`tilecraft-import`: an ONNX model to graph-dialect IR plus a weight file.

    tilecraft-import model.onnx -o model.mlir [--input-shape x=1x3x224x224 ...]

writes `model.mlir` and, beside it, `model.weights.npz` with the arrays that the
IR's `graph.weight "name"` ops name. The module attribute `graph.weights` holds the
weight file's path exactly as derived from `-o` (`out/model.mlir` ->
`out/model.weights.npz`): like every path on a command line it is relative to the
current directory, so run later tools from the same directory (or give `-o` an
absolute path). A model without large constants gets no weight file.

Without `-o` the IR goes to stdout; then a model with weights needs `--weights`.
Every error is one line on stderr and exit code 1 (tools/errors.py).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from pathlib import Path

from tilecraft.tools.errors import ArgumentParser, UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import add_input_shape_option, add_version_option, input_shapes

PROG = "tilecraft-import"


def weights_path_for(output: str) -> str:
    """`out/model.mlir` -> `out/model.weights.npz` (the path as given, not resolved)."""
    path = Path(output)
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return str(path.with_name(stem + ".weights.npz"))


def make_arg_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Import an ONNX model (any opset; before 13 converted with onnx.version_converter) as tilecraft graph-dialect IR.",
    )
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", help="the .mlir to write (weights go beside it as <name>.weights.npz)")
    parser.add_argument("--weights", help="where to write the weights (default: beside the output)")
    add_input_shape_option(parser)
    add_traceback_option(parser)
    add_version_option(parser)
    return parser


def run(args) -> None:
    # Imported here: the command line is checked before onnx and xDSL are loaded.
    from xdsl.printer import Printer

    from tilecraft.frontends.onnx import from_onnx
    from tilecraft.utils.weights import attach

    module, store = from_onnx(args.model, input_shapes=input_shapes(args.input_shape))
    weights = args.weights or (weights_path_for(args.output) if args.output else None)
    if store.arrays:
        if weights is None:
            raise UserError("the model has weights: pass -o MODEL.mlir (or --weights PATH.npz) to save them")
        attach(module, store, weights)
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    text = out.getvalue() + "\n"
    if args.output:
        with writing(args.output):
            Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)


def main(argv: Sequence[str] | None = None) -> int:
    args = make_arg_parser().parse_args(argv)
    return run_tool(PROG, lambda: run(args), argv)


if __name__ == "__main__":
    sys.exit(main())
