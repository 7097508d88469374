"""Run-time checks of compiled code (`te.assert` / `loop.assert`): a failed one
makes the call raise `RuntimeCheckError` with its message, as onnxruntime raises
for a gather id out of range; the tools print it and exit 1.

Covered: the JIT'd loop function, a te function through `tc.build`, the
reference evaluator, gather through the te API and through an ONNX model, a model
saved as a shared library and loaded again, and `tilecraft-run`.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.llvm.jit import RuntimeCheckError
from tilecraft.backends.reference import EvaluationError, evaluate_module
from tilecraft.driver.context import parse_text
from tilecraft.driver.kernels import compile_loop_module
from tilecraft.frontends.te.expr import checked
from tilecraft.topi import transform

LOOP_CHECK = """
func.func @f(%A: memref<8xi32>, %B: memref<8xi32>) {
  %c4 = arith.constant 4 : i32
  loop.for %i = 0 to 8 {
    %a = memref.load %A[%i] : memref<8xi32>
    %ok = arith.cmpi slt, %a, %c4 : i32
    loop.assert %ok, "an element of A is 4 or more"
    memref.store %a, %B[%i] : memref<8xi32>
  }
  func.return
}
"""


def test_loop_assert_raises_after_the_call_and_is_cleared():
    f = compile_loop_module(parse_text(LOOP_CHECK))["f"]
    a, b = np.arange(8, dtype=np.int32) % 4, np.zeros(8, np.int32)
    f(a, b)
    np.testing.assert_array_equal(b, a)
    a[5] = 9
    with pytest.raises(RuntimeCheckError, match="runtime error: an element of A is 4 or more"):
        f(a, b)
    a[5] = 1
    f(a, b)  # the error word was cleared: the next good call succeeds


@pytest.mark.parametrize("n", [8, 7, 70])
def test_vectorized_loop_assert_checks_every_active_lane(n):
    text = LOOP_CHECK.replace("memref<8xi32>", f"memref<{n}xi32>").replace(
        "loop.for %i = 0 to 8 {", f"loop.for %i = 0 to {n} vectorized {{"
    )
    f = compile_loop_module(parse_text(text))["f"]
    a, b = np.arange(n, dtype=np.int32) % 4, np.zeros(n, np.int32)
    f(a, b)
    np.testing.assert_array_equal(b, a)
    for lane in (0, n - 1, n // 2):
        a[lane] = 4
        with pytest.raises(RuntimeCheckError, match="4 or more"):
            f(a, b)
        a[lane] = 0
    f(a, b)


def test_a_module_without_checks_has_no_error_word():
    text = LOOP_CHECK.replace('    loop.assert %ok, "an element of A is 4 or more"\n', "")
    assert compile_loop_module(parse_text(text)).runtime_errors is None


def _take():
    data = te.placeholder((5, 3), "float32", name="data")
    ids = te.placeholder((4,), "int64", name="ids")
    return data, ids, transform.gather(data, ids, 0)


def test_gather_out_of_range_raises_in_compiled_code_and_reference():
    data, ids, out = _take()
    f = tc.build(te.create_schedule(out), [data, ids, out])
    d = np.arange(15, dtype=np.float32).reshape(5, 3)
    good = np.array([0, 4, -1, -5])
    o = np.zeros((4, 3), np.float32)
    f(d, good, o)
    np.testing.assert_array_equal(o, d[good])
    module = te.build_module(None, [data, ids, out])
    np.testing.assert_array_equal(evaluate_module(module, "main", [d, good])[0], d[good])
    for bad in ([0, 5, 1, 1], [-6, 0, 0, 0]):
        message = r"gather 'gather': an index in 'ids' is out of range; .* must be within \[-5, 4\]"
        with pytest.raises(RuntimeCheckError, match=message):
            f(d, np.array(bad), o)
        with pytest.raises(EvaluationError, match=message):
            evaluate_module(module, "main", [d, np.array(bad)])


def test_checked_expression_in_a_scheduled_pipeline():
    """A check inside a stage computed at a consumer's loop, and inside a stage
    inlined into its reader, still fires."""
    A = te.placeholder((16,), "int32", name="A")
    B = te.compute((16,), lambda i: checked(A[i] * 2, A[i] >= 0, "B: A must not be negative"), name="B")
    C = te.compute((16,), lambda i: B[i] + 1, name="C")
    for mode in ("at", "inline"):
        s = te.create_schedule(C)
        o, _ = s[C].split(C.op.axis[0], factor=4)
        if mode == "at":
            s[B].compute_at(s[C], o)
        else:
            s[B].compute_inline()
        f = tc.build(s, [A, C])
        a, c = np.arange(16, dtype=np.int32), np.zeros(16, np.int32)
        f(a, c)
        np.testing.assert_array_equal(c, a * 2 + 1)
        a[13] = -1
        with pytest.raises(RuntimeCheckError, match="B: A must not be negative"):
            f(a, c)


def _gather_model(path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0)],
        "g",
        [helper.make_tensor_value_info("table", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [2, 3])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.save(model, str(path))
    return path


def test_onnx_gather_out_of_range_names_the_node_values(tmp_path):
    m = tc.compile(str(_gather_model(tmp_path / "gather.onnx")))
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(m(table, np.array([3, -4])), table[[3, -4]])
    message = r"gather 'rows': an index in 'ids' is out of range; indices into axis 0 of 'table'"
    with pytest.raises(RuntimeCheckError, match=message):
        m(table, np.array([1, 4]))
    np.testing.assert_array_equal(m(table, np.array([0, 1])), table[[0, 1]])
    # A saved model's library carries its error word and messages.
    m.save(tmp_path / "saved")
    from tilecraft.runtime import load

    loaded = load(tmp_path / "saved")
    np.testing.assert_array_equal(loaded(table, np.array([2, 0])), table[[2, 0]])
    with pytest.raises(RuntimeCheckError, match=message):
        loaded(table, np.array([-5, 0]))


def test_tilecraft_run_reports_a_failed_check_and_exits_1(tmp_path):
    model = _gather_model(tmp_path / "gather.onnx")
    np.save(tmp_path / "table.npy", np.zeros((4, 3), np.float32))
    np.save(tmp_path / "ids.npy", np.array([0, 7]))
    run = subprocess.run(
        [sys.executable, "-m", "tilecraft.tools.run", str(model),
         "--input", f"table={tmp_path / 'table.npy'}", "--input", f"ids={tmp_path / 'ids.npy'}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "runtime error: gather 'rows': an index in 'ids' is out of range" in run.stderr


def test_threads_calling_one_model_get_their_own_failures(tmp_path):
    # One error word per module: calls take turns, so a failed check in one thread's
    # call never surfaces in another thread's good call (ctypes drops the GIL).
    import threading

    m = tc.compile(str(_gather_model(tmp_path / "gather.onnx")))
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    good, bad = np.array([3, -4]), np.array([1, 4])
    outcomes = {"good raised": 0, "bad passed": 0}

    def run(ids, key, raises):
        for _ in range(1000):
            try:
                m(table, ids)
                outcomes[key] += not raises
            except RuntimeCheckError:
                outcomes[key] += raises

    threads = [threading.Thread(target=run, args=(good, "good raised", True)),
               threading.Thread(target=run, args=(bad, "bad passed", False))]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == {"good raised": 0, "bad passed": 0}
