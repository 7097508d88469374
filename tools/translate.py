"""`tilecraft-translate`: IR in, LLVM IR / assembly / object / shared library or an
accelerator program out.

    tilecraft-translate kernel.mlir --emit=asm            # to stdout
    tilecraft-translate kernel.mlir --emit=obj -o kernel.o
    tilecraft-translate kernel.mlir --emit=shared-lib -o libkernel.so
    tilecraft-translate add.mlir --emit=ptx --arch=sm_90    # GPU kernels (bound loops) as PTX
    tilecraft-translate prog.mlir --emit=accel-bin -o prog.bin
    tilecraft-translate prog.mlir --emit=accel-asm        # objdump-like listing
    tilecraft-translate --disassemble prog.bin            # accel IR back

The input is loop-level IR, te-level IR (lowered to loops first, with the same
passes as `tilecraft.lower`), or IR already in the llvm dialect. Code is
generated for the host CPU through the LLVM backend (`tilecraft.backends.llvm`).
The accel emits take accel IR (one `accel.program`; tokens are lowered to flags with
`lower-accel-tokens` first) and write the accel-bin file (`backends/accel/binary.py`)
or its listing; `--disassemble` reads an accel-bin file and prints its accel IR (or,
with `--emit=accel-asm|accel-bin`, that listing or the file again).
Every user error (unreadable file, bad IR, an op the backend does not support, a
failed link) is one line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tilecraft.tools.errors import ArgumentParser, UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import add_version_option

PROG = "tilecraft-translate"
LLVM_EMITTERS = ("llvm-ir", "asm", "obj", "shared-lib")
ACCEL_EMITTERS = ("accel-bin", "accel-asm")
EMITTERS = LLVM_EMITTERS + ACCEL_EMITTERS + ("ptx",)


def _arguments() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Translate loop- or te-level IR to LLVM IR, assembly, an object file "
        "or a shared library for the host CPU; accel IR to an accelerator binary or listing, "
        "and an accelerator binary back to accel IR.",
    )
    parser.add_argument("input", help="input IR file ('-' for stdin), or with --disassemble an accel-bin file")
    parser.add_argument(
        "--emit",
        choices=EMITTERS,
        default=None,
        help="what to produce (default: llvm-ir; with --disassemble, accel IR)",
    )
    parser.add_argument(
        "--disassemble",
        action="store_true",
        help="the input is an accel-bin file: print its accel IR (or --emit=accel-asm|accel-bin)",
    )
    parser.add_argument(
        "-o", "--output", help="output file (default: stdout; required for shared-lib)"
    )
    parser.add_argument("--arch", default="sm_80", help="with --emit=ptx: the GPU architecture (default: sm_80)")
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
    add_traceback_option(parser)
    add_version_option(parser)
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
    from tilecraft.driver.context import parse_file, parse_text
    from tilecraft.tools.targets import to_loop_level

    module = parse_text(sys.stdin.read(), "<stdin>") if path == "-" else parse_file(path)
    return to_loop_level(module, PROG)


def _write(data: bytes | str, output: str | None) -> None:
    if output:
        mode = "wb" if isinstance(data, bytes) else "w"
        with writing(output), open(output, mode) as out:
            out.write(data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data)


def _translate_accel(args: argparse.Namespace) -> None:
    """accel IR -> accel-bin / accel-asm, or accel-bin -> accel IR (--disassemble)."""
    import io

    from tilecraft.backends.accel.binary import disassemble, write_binary
    from tilecraft.backends.accel.program import format_asm
    from tilecraft.tools.targets import accel_program
    from xdsl.printer import Printer

    if args.disassemble:
        if args.input == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.input, "rb") as f:
                data = f.read()
        module = disassemble(data, "<stdin>" if args.input == "-" else args.input)
        if args.emit is None:
            out = io.StringIO()
            Printer(stream=out).print_op(module)
            _write(out.getvalue() + "\n", args.output)
            return
    else:
        from tilecraft.driver.context import parse_file, parse_text

        module = parse_text(sys.stdin.read(), "<stdin>") if args.input == "-" else parse_file(args.input)
    program = accel_program(module, f"--emit={args.emit}")
    _write(write_binary(program) if args.emit == "accel-bin" else format_asm(program), args.output)


def _translate(args: argparse.Namespace) -> None:
    from tilecraft.driver import emit as backend

    if args.disassemble or args.emit in ACCEL_EMITTERS:
        if args.disassemble and args.emit in LLVM_EMITTERS:
            raise UserError(f"--disassemble gives accel IR, accel-asm or accel-bin, not --emit={args.emit}")
        _translate_accel(args)
        return
    if args.emit is None:
        args.emit = "llvm-ir"
    module = _load(args.input)
    if args.emit == "ptx":
        _write(_ptx(module, args.arch), args.output)
        return
    if any(op.name == "accel.program" for op in module.ops):
        raise UserError(
            f"the input is accel IR, which has no --emit={args.emit}: use --emit=accel-bin or --emit=accel-asm"
        )
    if args.emit == "shared-lib":
        if not args.output:
            raise UserError("--emit=shared-lib needs an output file (-o)")
        backend.emit_shared_library(module, args.output, args.num_threads)
        return
    if args.emit == "obj":
        data: bytes | str = backend.emit_object(module, args.num_threads)
    elif args.emit == "asm":
        data = backend.emit_assembly(module, args.num_threads)
    else:
        data = backend.emit_llvm_ir(module, optimize=not args.no_opt, num_threads=args.num_threads)
    _write(data, args.output)


def _ptx(module, arch: str) -> str:
    """The PTX of a module's GPU kernels: loop IR with bound loops is outlined
    (convert-loop-to-gpu, insert-gpu-barriers) and its kernels lowered
    (convert-gpu-to-nvvm) first."""
    from xdsl.dialects import gpu

    from tilecraft.backends.nvptx import device_module, emit_ptx, parse_arch
    from tilecraft.driver.context import make_context
    from tilecraft.lowering.convert_gpu_to_nvvm import ConvertGpuToNvvmPass
    from tilecraft.lowering.convert_loop_to_gpu import ConvertLoopToGpuPass
    from tilecraft.transforms.insert_gpu_barriers import InsertGpuBarriersPass

    try:
        arch = parse_arch(arch)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not any(isinstance(op, gpu.ModuleOp) for op in module.ops):
        ConvertLoopToGpuPass().apply(make_context(), module)
        InsertGpuBarriersPass().apply(make_context(), module)
    ConvertGpuToNvvmPass().apply(make_context(), module)
    kernels = [op for op in module.ops if isinstance(op, gpu.ModuleOp)]
    if not kernels:
        raise UserError("--emit=ptx: the input has no GPU kernels (no loops bound to blockIdx/threadIdx)")
    return "".join(emit_ptx(device_module(k), arch) for k in kernels)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    return run_tool(PROG, lambda: _translate(args), argv)


if __name__ == "__main__":
    sys.exit(main())
