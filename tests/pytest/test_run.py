"""`tilecraft-run`'s own logic (arguments, .npy files, --check, errors), in process,
with a stand-in for the LLVM backend so it is tested apart from code generation.

The stand-in compiles each function of the lowered module into an object with the
backend's interface (`arg_names`, `arg_types` as (shape, numpy dtype), called with
inputs then outputs) whose body is numpy code picked by the function's name.
The end-to-end runs with the real backend are in tests/filecheck/tools/run.mlir.
"""

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

import tilecraft.driver.kernels
from tilecraft.backends.llvm.jit import signature_of
from tilecraft.tools import run

FILECHECK_TOOLS = Path(__file__).resolve().parents[1] / "filecheck" / "tools"
RUN_MLIR = str(FILECHECK_TOOLS / "run.mlir")
LOOPS_MLIR = str(FILECHECK_TOOLS / "Inputs" / "loops.mlir")


def _add(a, b, c):
    c[...] = a + b


def _rowmax(x, m):
    m[...] = x.max(axis=1)


def _copy(src, dst):
    dst[...] = src


def _fma(x, y, acc):
    acc[...] += x * y


class FakeCompiledFunction:
    def __init__(self, func_op: func.FuncOp, body):
        # The signature (names, shapes, which arguments are written) is the real one.
        self.specs = signature_of(func_op)
        self.arg_names = [s.name for s in self.specs]
        self.arg_types = [(s.shape, s.dtype) for s in self.specs]
        self.body = body

    def __call__(self, *arrays):
        for array, (shape, dtype) in zip(arrays, self.arg_types, strict=True):
            assert array.shape == shape and array.dtype == dtype
        self.body(*arrays)


@pytest.fixture
def backend(monkeypatch):
    """The fake backend; tests may replace entries of `bodies`."""
    bodies = {"add": _add, "rowmax": _rowmax, "copy": _copy, "fma": _fma}

    def compile_loop_module(module, num_threads=None):
        return {
            op.sym_name.data: FakeCompiledFunction(op, bodies[op.sym_name.data])
            for op in module.ops
            if isinstance(op, func.FuncOp)
        }

    monkeypatch.setattr(
        tilecraft.driver.kernels, "compile_loop_module", compile_loop_module, raising=False
    )
    return bodies


def save(tmp_path: Path, name: str, array) -> str:
    path = tmp_path / name
    np.save(path, np.asarray(array))
    return str(path)


def test_random_inputs_check_ok(backend, capsys):
    assert run.main([RUN_MLIR, "--entry", "add", "--check", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "C: (100,) float32 [" in out
    assert "check: OK (C: max abs err 0)" in out


def test_inputs_and_outputs_from_files(backend, tmp_path, capsys):
    a = save(tmp_path, "a.npy", np.arange(100, dtype=np.float32))
    b = save(tmp_path, "b.npy", np.ones(100, dtype=np.float32))
    c = str(tmp_path / "c.npy")
    argv = [RUN_MLIR, "--entry", "add", "--input", a, "--input", b, "--output", c]
    assert run.main(argv) == 0
    np.testing.assert_array_equal(np.load(c), np.arange(100, dtype=np.float32) + 1)
    assert capsys.readouterr().out == ""  # saved, not printed


def test_check_mismatch(backend, capsys):
    def wrong(a, b, c):
        c[...] = a + b
        c[42] += 1.0

    backend["add"] = wrong
    assert run.main([RUN_MLIR, "--entry", "add", "--check"]) == 1
    err = capsys.readouterr().err
    assert "check: MISMATCH" in err
    assert "C: 1 of 100 elements differ" in err
    assert "first at (42,)" in err


def test_check_tolerates_rounding(backend, capsys):
    def reassociated(x, m):
        m[...] = x.max(axis=1) * np.float32(1 + 1e-6)

    backend["rowmax"] = reassociated
    assert run.main([RUN_MLIR, "--entry", "rowmax", "--check"]) == 0
    assert "check: OK" in capsys.readouterr().out


def test_loop_level_function(backend, tmp_path, capsys):
    a = save(tmp_path, "a.npy", np.arange(100, dtype=np.float32))
    assert run.main([LOOPS_MLIR, "--entry", "copy", "--input", a]) == 0
    assert "Out: (100,) float32 [0., 1., 2., 3., 4., 5., 6., 7.] ... (100 values)" in (
        capsys.readouterr().out
    )


def test_loop_level_function_missing_input(backend, tmp_path, capsys):
    """A buffer the function only reads is an input even when no --input fills it:
    never zeroed as an output and the result printed as if it were right."""
    x = save(tmp_path, "x.npy", np.arange(4, dtype=np.float32))
    assert run.main([LOOPS_MLIR, "--entry", "fma", "--input", x]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "tilecraft-run: error: @fma takes 2 inputs (X, Y), got 1 --input files: missing Y\n"


def test_loop_level_function_inputs(backend, tmp_path, capsys):
    x = save(tmp_path, "x.npy", np.arange(4, dtype=np.float32))
    y = save(tmp_path, "y.npy", np.full(4, 2, np.float32))
    acc = save(tmp_path, "acc.npy", np.ones(4, np.float32))
    out = str(tmp_path / "out.npy")
    # Two files: the read-only buffers; the written one is an output, zeroed.
    assert run.main([LOOPS_MLIR, "--entry", "fma", "--input", x, "--input", y, "--output", out]) == 0
    np.testing.assert_array_equal(np.load(out), np.arange(4) * 2.0)
    # A third file starts the accumulator, which is still an output.
    argv = [LOOPS_MLIR, "--entry", "fma", "--input", x, "--input", y, "--input", acc, "--output", out]
    assert run.main(argv) == 0
    np.testing.assert_array_equal(np.load(out), np.arange(4) * 2.0 + 1)
    assert run.main(argv[:-2]) == 0
    assert capsys.readouterr().out == "Acc: (4,) float32 [1., 3., 5., 7.]\n"
    # Without files, both read-only buffers are random inputs and Acc the output.
    assert run.main([LOOPS_MLIR, "--entry", "fma", "--seed", "2"]) == 0
    assert capsys.readouterr().out.startswith("Acc: (4,) float32")


@pytest.mark.parametrize(
    "make_input, message",
    [
        (
            lambda d: save(d, "x.npy", np.zeros(100, np.float32)),
            "input file '{d}/x.npy' for argument 'X' holds a (100,) float32 array; "
            "'X' is (16, 32) float32",
        ),
        (
            lambda d: save(d, "x.npy", np.zeros((16, 32), np.float64)),
            "input file '{d}/x.npy' for argument 'X' holds a (16, 32) float64 array; "
            "'X' is (16, 32) float32",
        ),
        (lambda d: str(d / "missing.npy"), "cannot read input file '{d}/missing.npy' for argument 'X'"),
        (lambda d: RUN_MLIR, f"cannot read input file '{RUN_MLIR}' for argument 'X'"),
    ],
    ids=["shape", "dtype", "missing", "not-npy"],
)
def test_bad_input_file(backend, tmp_path, capsys, make_input, message):
    assert run.main([RUN_MLIR, "--entry", "rowmax", "--input", make_input(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tilecraft-run: error: " + message.format(d=tmp_path))
    assert "Traceback" not in err


def test_wrong_number_of_files(backend, tmp_path, capsys):
    a = save(tmp_path, "a.npy", np.zeros(100, np.float32))
    assert run.main([RUN_MLIR, "--entry", "add", "--input", a]) == 1
    assert "@add takes 2 inputs (A, B), got 1 --input files" in capsys.readouterr().err
    argv = [RUN_MLIR, "--entry", "add", "--output", "x.npy", "--output", "y.npy"]
    assert run.main(argv) == 1
    assert "@add has 1 outputs (C), got 2 --output files" in capsys.readouterr().err


def test_unknown_entry_lists_functions(backend, capsys):
    assert run.main([RUN_MLIR, "--entry", "nope"]) == 1
    assert (
        "tilecraft-run: error: no function @nope in the file (its functions: @add, @rowmax)"
        in capsys.readouterr().err
    )


def test_check_needs_te(backend, capsys):
    assert run.main([LOOPS_MLIR, "--entry", "copy", "--check"]) == 1
    assert "--check needs a te function" in capsys.readouterr().err


def test_bad_ir_is_located(backend, tmp_path, capsys):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f() {\n  loop.for %i = 0 to x {\n  }\n  func.return\n}\n")
    assert run.main([str(path), "--entry", "f"]) == 1
    assert f"{path}:2:22: error: Expected integer literal" in capsys.readouterr().err


def test_internal_error_is_one_line(backend, capsys):
    def crash(*arrays):
        raise RuntimeError("boom")

    backend["add"] = crash
    assert run.main([RUN_MLIR, "--entry", "add"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "tilecraft-run: internal error: RuntimeError: boom (rerun with --traceback and report it)"
    )


def test_bad_command_line_exits_1(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main([RUN_MLIR])  # no --entry
    assert exit_info.value.code == 1
    assert "tilecraft-run: error: the following arguments are required: --entry" in (
        capsys.readouterr().err
    )
