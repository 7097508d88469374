"""Bad and odd inputs, as a new user would give them, across the tools, the
Python API and saved models (issue 8, section 1).

Every tool case runs one tool's `main` on one input and asserts the exit code
(1 for a user error: never 2, the internal-error code), that nothing printed is
a Python traceback or an "internal error", and the words of the message (the
`file:line:col`, node, argument or key it names). A few cases run the tool as a
process, where a crash (a signal) would otherwise take pytest down with it.
Each case is a class of bug that was once a traceback, a crash, a vague message
or a silent wrong answer; the fix is for the class, the case its example.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.frontends.onnx import OnnxImportError
from tilecraft.runtime import load
from tilecraft.runtime.saved import VERSION, SavedModelError
from tilecraft.tools import import_model, opt, run, translate

BIN_DIR = Path(sys.executable).parent
TOOLS = {
    "tilecraft-opt": opt.main,
    "tilecraft-run": run.main,
    "tilecraft-translate": translate.main,
    "tilecraft-import": import_model.main,
}

# -- inputs ----------------------------------------------------------------------

TE_ADD = """\
func.func @add(%A: tensor<8xf32>, %B: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %b = te.read %B[%i] : tensor<8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}
"""

GRAPH = """\
func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}, %w: tensor<8x16xf32> {tc.name = "w"}) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""

UNDEFINED_VALUE = """\
func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %s = arith.addf %a, %zz : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}
"""

TWO_SCHEDULES = """\
func.func @s(%A: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<16x32xf32> {
    %a = te.read %A[%i, %j] : tensor<16x32xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<16x32xf32>
    %j = sched.axis %s "j"
    sched.vectorize %j
  }
  sched.schedule {
    %s = sched.stage %C : tensor<16x32xf32>
    %i = sched.axis %s "i"
    sched.parallel %i
  }
  func.return %C : tensor<16x32xf32>
}
"""

ODD_NAMES = """\
func.func @f(%A: tensor<4xf32>) -> tensor<4xf32> {
  %C = te.compute "my \\"out\\" put" (%i: "i j") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}
"""

HUGE = """\
func.func @h(%A: tensor<100000000000xf32>) -> tensor<100000000000xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<100000000000xf32> {
    %a = te.read %A[%i] : tensor<100000000000xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<100000000000xf32>
}
"""

WRONG_INDEX_COUNT = """\
func.func @f(%A: memref<4x4xf32> {tc.name = "A"}, %B: memref<4xf32> {tc.name = "B"}) {
  %c = arith.constant 0 : index
  %v = memref.load %A[%c] : memref<4x4xf32>
  memref.store %v, %B[%c] : memref<4xf32>
  func.return
}
"""

EMPTY_GRAPH_TENSOR = GRAPH.replace("4x16xf32", "0x16xf32").replace("4x8xf32", "0x8xf32")

# Reductions over an empty axis: the values of the empty set (fold-empty-tensors).
EMPTY_REDUCTIONS = """\
func.func @main(%x: tensor<2x0x4xf32> {tc.name = "x"}) -> (tensor<2x4xf32>, tensor<2x1x4xf32>) {
  %m = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %p = graph.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  func.return %m, %p : tensor<2x4xf32>, tensor<2x1x4xf32>
}
"""

# An empty tensor fold-empty-tensors cannot fold away: the bias is not known.
EMPTY_CONV_WITH_BIAS = """\
func.func @main(%x: tensor<1x0x4x4xf32>, %w: tensor<2x0x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %y = graph.conv2d %x, %w, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
"""

WEIGHTS_NOT_A_STRING = """\
builtin.module attributes {graph.weights = 3 : i64} {
  func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}) -> tensor<4x16xf32> {
    %r = graph.relu %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
    func.return %r : tensor<4x16xf32>
  }
}
"""

MISSING_WEIGHTS_FILE = """\
builtin.module attributes {graph.weights = "does-not-exist.npz"} {
  func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}) -> tensor<4x8xf32> {
    %w = graph.weight "w" : tensor<8x16xf32>
    %r = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    func.return %r : tensor<4x8xf32>
  }
}
"""


SCALAR_ARGUMENT = """\
func.func @h(%A: tensor<16xf32>, %x: f32) -> tensor<16xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<16xf32> {
    %a = te.read %A[%i] : tensor<16xf32>
    %b = arith.addf %a, %x : f32
    te.yield %b : f32
  }
  func.return %C : tensor<16xf32>
}
"""

F80 = """\
func.func @h(%A: tensor<16xf80>) -> tensor<16xf80> {
  %C = te.compute "C" (%i: "i") -> tensor<16xf80> {
    %a = te.read %A[%i] : tensor<16xf80>
    te.yield %a : f80
  }
  func.return %C : tensor<16xf80>
}
"""


def nested_loops(depth: int) -> str:
    lines = ['func.func @deep(%A: memref<4xf32> {tc.name = "A"}, %B: memref<4xf32> {tc.name = "B"}) {']
    lines += [f"loop.for %i{k} = 0 to 1 {{" for k in range(depth)]
    lines += [
        "%c = arith.constant 0 : index",
        "%v = memref.load %A[%c] : memref<4xf32>",
        "memref.store %v, %B[%c] : memref<4xf32>",
    ]
    lines += ["}"] * depth + ["func.return", "}"]
    return "\n".join(lines) + "\n"


def onnx_model(nodes, inputs, outputs=("y",), inits=None) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in (inits or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def value(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


READ_PAST_THE_END = """\
func.func @shift(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %one = arith.constant 1 : index
    %j = arith.addi %i, %one : index
    %a = te.read %A[%j] : tensor<8xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<8xf32>
}
"""

INTEGER_DIVISION = """\
func.func @div(%A: tensor<8xi32>, %B: tensor<8xi32>) -> tensor<8xi32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xi32> {
    %a = te.read %A[%i] : tensor<8xi32>
    %b = te.read %B[%i] : tensor<8xi32>
    %q = arith.divsi %a, %b : i32
    %r = arith.remsi %a, %b : i32
    %s = arith.addi %q, %r : i32
    te.yield %s : i32
  }
  func.return %C : tensor<8xi32>
}
"""

RELU = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [2, 3])])
ONNX_FILES = {
    "ok.onnx": RELU,
    "no-shape.onnx": onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", None)]),
    "zero-size.onnx": onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [0, 3])]),
    "dot.onnx": onnx_model([helper.make_node("MatMul", ["a", "b"], ["y"])], [value("a", [3]), value("b", [3])]),
    "two-writers.onnx": onnx_model(
        [helper.make_node("Relu", ["x"], ["y"], name="first"), helper.make_node("Neg", ["x"], ["y"], name="second")],
        [value("x", [2, 3])],
    ),
    "writes-initializer.onnx": onnx_model(
        [helper.make_node("Relu", ["x"], ["w"], name="relu")],
        [value("x", [2, 3])],
        outputs=("w",),
        inits={"w": np.ones((2, 3), np.float32)},
    ),
    "gather.onnx": helper.make_model(
        helper.make_graph(
            [helper.make_node("Gather", ["table", "ids"], ["y"], name="rows")],
            "g",
            [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "table")],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
        ir_version=8,
    ),
    "spaces.onnx": onnx_model(
        [helper.make_node("Relu", ["my input"], ['out "y"'])], [value("my input", [2, 3])], outputs=('out "y"',)
    ),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A directory holding every input file the cases name."""
    root = tmp_path_factory.mktemp("bad-inputs")
    texts = {
        "empty.mlir": "",
        "blank.mlir": "  \n\n",
        "comments.mlir": "// a comment\n\n// another one\n",
        "te.mlir": TE_ADD,
        "graph.mlir": GRAPH,
        "undefined.mlir": UNDEFINED_VALUE,
        "two-schedules.mlir": TWO_SCHEDULES,
        "empty-name.mlir": TE_ADD.replace("@add", '@""'),
        "odd-names.mlir": ODD_NAMES,
        "huge.mlir": HUGE,
        "too-large.mlir": HUGE.replace("100000000000", str(1 << 62)),
        "index-count.mlir": WRONG_INDEX_COUNT,
        "empty-tensor.mlir": EMPTY_GRAPH_TENSOR,
        "empty-reductions.mlir": EMPTY_REDUCTIONS,
        "empty-conv.mlir": EMPTY_CONV_WITH_BIAS,
        "weights-int.mlir": WEIGHTS_NOT_A_STRING,
        "weights-missing.mlir": MISSING_WEIGHTS_FILE,
        "nested-200.mlir": nested_loops(200),
        "nested-3000.mlir": nested_loops(3000),
        "garbage.onnx": "not a model\n",
        "scalar-argument.mlir": SCALAR_ARGUMENT,
        "f80.mlir": F80,
        "declaration.mlir": "func.func private @d(memref<4xf32>)\n",
        "no-results.mlir": TE_ADD.replace(") -> tensor<8xf32> {\n  %C", ") {\n  %C").replace(
            "func.return %C : tensor<8xf32>", "func.return"
        ),
        "past-the-end.mlir": READ_PAST_THE_END,
        "division.mlir": INTEGER_DIVISION,
        "dynamic.mlir": GRAPH.replace("tensor<4x16xf32>", "tensor<?x16xf32>").replace("4x8xf32", "?x8xf32"),
    }
    for name, text in texts.items():
        (root / name).write_text(text)
    (root / "not-utf8.mlir").write_bytes(b"\xff\xfe func")
    (root / "empty.onnx").write_bytes(b"")
    np.save(root / "ids-out-of-range.npy", np.array([0, 7, 1], np.int64))
    np.save(root / "dividends.npy", np.array([7, -7, 7, -7, 0, -(2**31), 5, 1], np.int32))
    np.save(root / "divisors.npy", np.array([0, 0, -2, 2, 0, -1, 3, 1], np.int32))
    for name, model in ONNX_FILES.items():
        onnx.save(model, str(root / name))
    return root


# -- tool cases ------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    args: tuple[str, ...]  # {dir} is the files directory
    words: tuple[str, ...]  # each must appear in stderr
    code: int = 1
    stdout: tuple[str, ...] = field(default=())  # for cases that now work


CASES = [
    # Empty files say so (not "Could not parse entire input").
    Case("empty-file", "tilecraft-opt", ("{dir}/empty.mlir",), ("empty.mlir:1:1: error: the file is empty",)),
    Case("blank-file", "tilecraft-run", ("{dir}/blank.mlir", "--entry", "f"), ("blank.mlir:3:1: error: the file is empty",)),
    Case("comment-only", "tilecraft-opt", ("{dir}/comments.mlir",), ("error: the file is only comments",)),
    Case("comment-only-translate", "tilecraft-translate", ("{dir}/comments.mlir",), ("comments.mlir:4:1: error: the file is only comments",)),
    # An undefined value is reported at its use.
    Case("undefined-value", "tilecraft-opt", ("{dir}/undefined.mlir",), ("undefined.mlir:4:25: error: use of undefined value %zz",)),
    Case("undefined-value-run", "tilecraft-run", ("{dir}/undefined.mlir", "--entry", "f"), ("undefined.mlir:4:25: error: use of undefined value %zz",)),
    # Input at the wrong level names its level and what lowers it.
    Case("graph-to-llvm", "tilecraft-opt", ("{dir}/graph.mlir", "-p", "convert-loop-to-llvm"),
         ("graph.mlir:2:3: error: convert-loop-to-llvm: the input is graph-level IR ('graph.dense')", "compile-model")),
    Case("te-to-llvm", "tilecraft-opt", ("{dir}/te.mlir", "-p", "loop-to-llvm"),
         ("te.mlir:2:3: error: convert-loop-to-llvm: the input is te-level IR ('te.compute')", "convert-te-to-loop")),
    Case("graph-translate", "tilecraft-translate", ("{dir}/graph.mlir",),
         ("graph.mlir:2:3: error: tilecraft-translate: the input is graph-level IR ('graph.dense')", "-p compile-model")),
    # A second schedule was ignored (then crashed the lowering).
    Case("second-schedule", "tilecraft-opt", ("{dir}/two-schedules.mlir",),
         ("two-schedules.mlir:11:3: error: 'sched.schedule' op: a function holds one sched.schedule",
          "the first is at", "two-schedules.mlir:6:3")),
    Case("second-schedule-run", "tilecraft-run", ("{dir}/two-schedules.mlir", "--entry", "s"), ("two-schedules.mlir:11:3: error:",)),
    Case("empty-function-name", "tilecraft-opt", ("{dir}/empty-name.mlir",),
         ("empty-name.mlir:1:1: error: 'func.func' op: the symbol name is empty",)),
    # An xDSL verifier that raises a bare Exception.
    Case("bare-exception-verifier", "tilecraft-opt", ("{dir}/index-count.mlir",),
         ("index-count.mlir:3:3: error: 'memref.load' op: expected an index for each dimension",)),
    # Empty tensors: folded away where their value is known (fold-empty-tensors), else
    # refused at the op.
    Case("empty-conv-with-bias", "tilecraft-run", ("{dir}/empty-conv.mlir", "--entry", "main"),
         ("empty-conv.mlir:2:3: error: check-graph-level: 'graph.conv2d' on an empty tensor (tensor<1x0x4x4xf32>) "
          "is not supported",)),
    Case("te-scalar-argument", "tilecraft-run", ("{dir}/scalar-argument.mlir", "--entry", "h"),
         ("scalar-argument.mlir:1:1: error: convert-te-to-loop: argument #2 of @h has type f32; te functions take tensors only",)),
    Case("no-numpy-dtype", "tilecraft-run", ("{dir}/f80.mlir", "--entry", "h"),
         ("f80.mlir:1:1: error: argument #1 of @h holds f80, which numpy has no dtype for",)),
    Case("run-a-declaration", "tilecraft-run", ("{dir}/declaration.mlir", "--entry", "d"),
         ("tilecraft-run: error: @d is a declaration (it has no body)",)),
    Case("te-returns-nothing", "tilecraft-run", ("{dir}/no-results.mlir", "--entry", "add", "--check"),
         ("tilecraft-run: error: @add returns nothing, so it computes nothing",)),
    Case("graph-dynamic-argument", "tilecraft-run", ("{dir}/dynamic.mlir", "--entry", "main"),
         ("dynamic.mlir:1:1: error: check-graph-level: argument #1 of @main has a dynamic shape (tensor<?x16xf32>)",)),
    Case("weights-not-a-string", "tilecraft-run", ("{dir}/weights-int.mlir", "--entry", "main"),
         ("tilecraft-run: error: the module attribute graph.weights must name a .npz file as a string",)),
    Case("missing-weights-file", "tilecraft-run", ("{dir}/weights-missing.mlir", "--entry", "main"),
         ("tilecraft-run: error: cannot read weight store 'does-not-exist.npz'",)),
    Case("missing-weights-file-opt", "tilecraft-opt", ("{dir}/weights-missing.mlir", "-p", "compile-model"),
         ("cannot read weight store 'does-not-exist.npz'",)),
    Case("too-deep", "tilecraft-opt", ("{dir}/nested-3000.mlir",), ("tilecraft-opt: error: the input nests too deeply",)),
    Case("too-deep-run", "tilecraft-run", ("{dir}/nested-3000.mlir", "--entry", "deep"), ("tilecraft-run: error: the input nests too deeply",)),
    Case("not-utf8", "tilecraft-translate", ("{dir}/not-utf8.mlir",), ("tilecraft-translate: error: the input is not UTF-8 text",)),
    # Command lines.
    Case("negative-seed", "tilecraft-run", ("{dir}/te.mlir", "--entry", "add", "--seed", "-1"),
         ("tilecraft-run: error: --seed must be a non-negative integer, got -1",)),
    Case("negative-threads", "tilecraft-run", ("{dir}/te.mlir", "--entry", "add", "--num-threads", "-3"),
         ("--num-threads must be a positive integer, got -3",)),
    Case("negative-threads-translate", "tilecraft-translate", ("{dir}/te.mlir", "--num-threads", "-3"),
         ("argument --num-threads: expected a positive integer, got '-3'",)),
    Case("huge-random-input", "tilecraft-run", ("{dir}/huge.mlir", "--entry", "h"),
         ("tilecraft-run: error: the random input 'A' is (100000000000,) float32: 373 GiB",)),
    Case("buffer-past-64-bit", "tilecraft-run", ("{dir}/too-large.mlir", "--entry", "h"),
         ("too-large.mlir:1:1: error: convert-loop-to-llvm: argument #1 of 'h' (memref<4611686018427387904xf32>) "
          "is 18446744073709551616 bytes, more than 64-bit addresses reach",)),
    Case("unknown-option-opt", "tilecraft-opt", ("{dir}/te.mlir", "--no-such-option"), ("unrecognized arguments: --no-such-option",)),
    Case("no-model-import", "tilecraft-import", (), ("the following arguments are required: model",)),
    # ONNX files.
    Case("empty-onnx", "tilecraft-import", ("{dir}/empty.onnx",), ("cannot read", "empty.onnx' as an ONNX model: the file is empty")),
    Case("empty-onnx-run", "tilecraft-run", ("{dir}/empty.onnx",), ("the file is empty",)),
    Case("garbage-onnx", "tilecraft-import", ("{dir}/garbage.onnx",), ("garbage.onnx' as an ONNX model",)),
    Case("onnx-input-without-shape", "tilecraft-import", ("{dir}/no-shape.onnx",),
         ("graph input 'x' has no shape", "--input-shape x=")),
    Case("onnx-two-writers", "tilecraft-import", ("{dir}/two-writers.onnx",),
         ("ONNX operator 'Neg' (node 'second'): output 'y' is already defined",)),
    Case("onnx-writes-initializer", "tilecraft-import", ("{dir}/writes-initializer.onnx",),
         ("ONNX operator 'Relu' (node 'relu'): output 'w' is already defined",)),
    Case("input-shape-unknown-name", "tilecraft-import", ("{dir}/ok.onnx", "--input-shape", "nope=1,2"),
         ("a shape is given for 'nope', which is not an input of the model (its inputs: x)",)),
    Case("run-unknown-input", "tilecraft-run", ("{dir}/ok.onnx", "--input", "nope={dir}/x.npy"),
         ("the model has no input 'nope' (its inputs: x)",)),
    # Reads outside a tensor, data-dependent indices, integer division by zero.
    Case("read-past-the-end", "tilecraft-opt", ("{dir}/past-the-end.mlir", "-p", "convert-te-to-loop"),
         ("past-the-end.mlir:5:5: error: convert-te-to-loop: te.read of 'A' is out of bounds: index 0 takes "
          "values from 1 to 8, but dimension 0 has size 8",)),
    Case("gather-id-out-of-range", "tilecraft-run", ("{dir}/gather.onnx", "--input", "ids={dir}/ids-out-of-range.npy"),
         ("runtime error: gather 'y': an index in 'ids' is out of range; indices into axis 0 of 'table' "
          "(size 4) must be within [-4, 3]",)),
    # numpy's meaning, never SIGFPE: x // 0 == x % 0 == 0; MIN // -1 == MIN; `arith.divsi` and
    # `arith.remsi` truncate (C), te's `//` and `%` floor.
    Case("integer-division-by-zero", "tilecraft-run",
         ("{dir}/division.mlir", "--entry", "div", "--input", "{dir}/dividends.npy", "--input", "{dir}/divisors.npy",
          "--check"), (), code=0,
         stdout=("C: (8,) int32 [          0,           0,          -2,          -4,           0,\n -2147483648,           3,           1]",
                 "check: OK")),
    # Odd inputs that now work.
    Case("odd-names", "tilecraft-run", ("{dir}/odd-names.mlir", "--entry", "f", "--check"), (), code=0,
         stdout=('my "out" put: (4,) float32', "check: OK")),
    Case("nested-200", "tilecraft-run", ("{dir}/nested-200.mlir", "--entry", "deep"), (), code=0, stdout=("B: (4,) float32",)),
    Case("onnx-input-shape-given", "tilecraft-import", ("{dir}/no-shape.onnx", "--input-shape", "x=2,3"), (), code=0,
         stdout=("tensor<2x3xf32>",)),
    Case("onnx-names-with-spaces", "tilecraft-run", ("{dir}/spaces.onnx",), (), code=0, stdout=("output0: (2, 3) float32",)),
    # Zero-size tensors and rank-0 results (were refused by check-graph-level and te.compute).
    Case("empty-graph-tensor", "tilecraft-run", ("{dir}/empty-tensor.mlir", "--entry", "main"), (), code=0,
         stdout=("output0: (0, 8) float32 []",)),
    Case("empty-graph-tensor-opt", "tilecraft-opt", ("{dir}/empty-tensor.mlir", "-p", "compile-model"), (), code=0,
         stdout=("func.func @main(%x: memref<0x16xf32>",)),
    Case("empty-reductions", "tilecraft-run", ("{dir}/empty-reductions.mlir", "--entry", "main"), (), code=0,
         stdout=("output0: (2, 4) float32 [-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf]",
                 "output1: (2, 1, 4) float32 [1., 1., 1., 1., 1., 1., 1., 1.]")),
    Case("onnx-zero-size-input", "tilecraft-run", ("{dir}/zero-size.onnx",), (), code=0, stdout=("(0, 3) float32 []",)),
    Case("onnx-rank-0-result", "tilecraft-run", ("{dir}/dot.onnx",), (), code=0, stdout=("output0: () float32",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_tool(case: Case, files: Path, capsys):
    argv = [a.replace("{dir}", str(files)) for a in case.args]
    try:
        code = TOOLS[case.tool](argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == case.code, err
    assert "Traceback" not in out + err
    assert "internal error" not in out + err
    for words in case.words:
        assert words in err, err
    for words in case.stdout:
        assert words in out, out
    if case.code == 1 and not err.startswith("usage:"):
        # One diagnostic, and at most the line it points at, marked.
        assert len(err.strip().splitlines()) <= 3, err


@pytest.mark.parametrize(
    "tool, args, words",
    [
        ("tilecraft-opt", ["{dir}/nested-3000.mlir"], "the input nests too deeply"),
        ("tilecraft-import", ["{dir}/empty.onnx"], "the file is empty"),
        ("tilecraft-opt", ["{dir}/te.mlir", "--bogus"], "unrecognized arguments"),
    ],
)
def test_tool_as_a_process(tool, args, words, files: Path):
    """The console scripts themselves: exit code 1, no traceback."""
    argv = [str(BIN_DIR / tool), *(a.replace("{dir}", str(files)) for a in args)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert words in result.stderr


# -- the Python API ---------------------------------------------------------------


def test_compile_input_shape_for_a_name_the_model_lacks():
    with pytest.raises(OnnxImportError, match="a shape is given for 'nope', which is not an input"):
        tc.compile(RELU, input_shapes={"nope": (2, 3)})


def test_compile_onnx_input_without_shape_is_not_a_scalar():
    model = ONNX_FILES["no-shape.onnx"]
    with pytest.raises(OnnxImportError, match="graph input 'x' has no shape"):
        tc.compile(model)
    compiled = tc.compile(model, input_shapes={"x": (2, 3)})
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(compiled(x), np.maximum(x, 0))


def test_compile_rejects_two_writers_of_one_name():
    with pytest.raises(OnnxImportError, match="output 'y' is already defined"):
        tc.compile(ONNX_FILES["two-writers.onnx"])


def test_compile_rejects_a_graph_without_outputs():
    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [2, 3])], outputs=())
    with pytest.raises(OnnxImportError, match="the graph has no outputs"):
        tc.compile(model)


def test_compile_rejects_a_tensor_too_large_to_address():
    from tilecraft.utils.diagnostics import OpError

    model = onnx_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [1 << 40, 1 << 30])])
    with pytest.raises(OpError, match=r"check-graph-level: argument #1 of @main .* has more than 2\*\*48 elements"):
        tc.compile(model)


def test_compile_rejects_a_non_model():
    with pytest.raises(TypeError, match="tilecraft.compile takes an ONNX model"):
        tc.compile(42)


def test_build_with_odd_names_computes():
    from tilecraft import te

    A = te.placeholder((4,), "float32", name='my "a"')
    C = te.compute((4,), lambda i: A[i] * 2, name="c d")
    f = tc.build(te.create_schedule(C), [A, C])
    a, c = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    f(a, c)
    np.testing.assert_array_equal(c, a * 2)


# -- saved models -----------------------------------------------------------------

RNG = np.random.default_rng(0)
W = RNG.standard_normal((64, 64)).astype(np.float32)  # square: a transposed copy has its shape
B = RNG.standard_normal((64, 48)).astype(np.float32)
MLP = onnx_model(
    [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("MatMul", ["h", "b"], ["y"])],
    [value("x", [2, 64])],
    inits={"w": W, "b": B},
)
X = RNG.standard_normal((2, 64)).astype(np.float32)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("saved") / "mlp"
    tc.compile(MLP).save(path)
    return path


@pytest.fixture
def copy(saved: Path, tmp_path: Path) -> Path:
    """A fresh copy of the saved model, for one test to damage."""
    return Path(shutil.copytree(saved, tmp_path / "mlp"))


def edit_manifest(path: Path, edit) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    edit(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_saved_model_loads_and_matches(saved: Path):
    np.testing.assert_allclose(load(saved)(X), X @ W @ B, rtol=1e-4, atol=1e-4)
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["version"] == VERSION
    assert set(manifest["files"]) == {"model.so", "weights.npz"}


def test_truncated_library_is_an_error_not_sigbus(copy: Path):
    library = copy / "model.so"
    library.write_bytes(library.read_bytes()[:4096])
    with pytest.raises(SavedModelError, match=r"model.so': 4096 bytes, the manifest records \d+ .*truncated"):
        load(copy)


def test_truncated_library_in_a_process(copy: Path):
    """Had the library been mapped, this would die of SIGBUS: run it apart."""
    library = copy / "model.so"
    library.write_bytes(library.read_bytes()[:4096])
    code = f"from tilecraft.runtime import load\ntry:\n    load({str(copy)!r})\nexcept ValueError as e:\n    print(e)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "model.so': 4096 bytes" in result.stdout


def test_changed_library_of_the_same_size(copy: Path):
    library = copy / "model.so"
    data = bytearray(library.read_bytes())
    data[-100] ^= 0xFF
    library.write_bytes(bytes(data))
    with pytest.raises(SavedModelError, match="model.so': its content does not match its sha256"):
        load(copy)


def test_weight_stored_transposed(copy: Path):
    weights = dict(np.load(copy / "weights.npz"))
    # the 64x64 dense weight, stored as one 64-column panel [1, 64, 64]
    name = next(n for n, a in weights.items() if a.shape[-2:] == (64, 64))
    weights[name] = np.ascontiguousarray(np.swapaxes(weights[name], -1, -2))  # same shape, same size
    with open(copy / "weights.npz", "wb") as f:
        np.savez(f, **weights)
    with pytest.raises(SavedModelError, match="weights.npz'.*(bytes|sha256)"):
        load(copy)


def test_edited_input_shape(copy: Path):
    def edit(manifest):
        manifest["ports"][0]["shape"] = [4, 64]
        manifest["ports"][0]["user_shape"] = [4, 64]

    edit_manifest(copy, edit)
    with pytest.raises(SavedModelError, match="key 'ports' does not describe the arguments 'model.so' was compiled for"):
        load(copy)


def test_edited_dtype(copy: Path):
    edit_manifest(copy, lambda m: m["ports"][0].update(dtype="int32"))
    with pytest.raises(SavedModelError, match="key 'ports' does not describe"):
        load(copy)


@pytest.mark.parametrize("key", ["ports", "entry", "files", "library", "kernel_calls"])
def test_missing_key(copy: Path, key: str):
    edit_manifest(copy, lambda m: m.pop(key))
    with pytest.raises(SavedModelError, match=f"manifest.json': the manifest has no key '{key}'"):
        load(copy)


def test_port_of_the_wrong_type(copy: Path):
    edit_manifest(copy, lambda m: m["ports"][0].update(shape="2x64"))
    with pytest.raises(SavedModelError, match=r"key 'shape' must be a list"):
        load(copy)


def test_port_with_a_bad_dtype(copy: Path):
    edit_manifest(copy, lambda m: m["ports"][0].update(dtype="float99"))
    with pytest.raises(SavedModelError, match=r"key 'ports\[0\].dtype' of port 'x' is not a numeric dtype: 'float99'"):
        load(copy)


def test_extra_file(copy: Path):
    (copy / "notes.txt").write_text("hello")
    with pytest.raises(SavedModelError, match="notes.txt': a file the manifest does not list"):
        load(copy)


def test_missing_file(copy: Path):
    (copy / "weights.npz").unlink()
    with pytest.raises(SavedModelError, match="weights.npz': missing"):
        load(copy)


def test_older_version(copy: Path):
    edit_manifest(copy, lambda m: m.update(version=2))
    with pytest.raises(SavedModelError, match=f"saved in format version 2; this tilecraft reads version {VERSION}"):
        load(copy)


def test_save_over_a_saved_model_and_into_a_used_directory(copy: Path, tmp_path: Path):
    tc.compile(MLP).save(copy)  # overwriting a saved model is fine
    np.testing.assert_allclose(load(copy)(X), X @ W @ B, rtol=1e-4, atol=1e-4)
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    with pytest.raises(SavedModelError, match=r"used' holds other files \(notes.txt\); save the model into a new"):
        tc.compile(MLP).save(used)


def test_not_json(copy: Path):
    (copy / "manifest.json").write_text("{ not json")
    with pytest.raises(SavedModelError, match="manifest.json': not JSON"):
        load(copy)


def test_not_a_directory(tmp_path: Path):
    with pytest.raises(SavedModelError, match="is not a saved tilecraft model: not a directory"):
        load(tmp_path / "nothing-here")


def test_parsed_ops_know_their_line_and_column():
    """Every parsed op's location is its file:line:col (found by bisecting line
    starts once: a 10k-op file used to take quadratic time here)."""
    from tilecraft.utils.diagnostics import location_of
    from tilecraft.driver.context import parse_text

    lines = [f"{' ' * (2 + n % 3)}%v{n + 1} = arith.addi %v{n}, %v{n} : i32" for n in range(300)]
    text = "func.func @f(%v0: i32) {\n" + "\n".join(lines) + "\n  func.return\n}\n"
    module = parse_text(text, "big.mlir")
    adds = [op for op in module.walk() if op.name == "arith.addi"]
    assert [location_of(op) for op in adds] == [f"big.mlir:{n + 2}:{3 + n % 3}" for n in range(300)]
