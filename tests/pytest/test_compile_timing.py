"""Where a compilation spends its time: `tc.compile(..., timing=True)` and
`tilecraft-opt --timing` print a tree of passes and stages on stderr, as
mlir-opt's `-mlir-timing` does (utils/compile_timing.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tilecraft.utils.compile_timing import Timer, collect_timing, record, section

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROW = re.compile(r"^\s+(\d+\.\d{4}) \(\s*\d+\.\d%\)  ( *)(\S.*)$")


def small_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [w],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def rows(report: str) -> dict[str, tuple[int, float]]:
    """name (with its `(xN)`) -> (depth, seconds) of each row of a report."""
    found = {}
    for line in report.splitlines():
        m = ROW.match(line)
        if m:
            found[m.group(3)] = (len(m.group(2)) // 2, float(m.group(1)))
    return found


def test_sections_nest_add_up_and_count():
    timer = Timer()
    with collect_timing(timer):
        for _ in range(3):
            with section("outer"):
                with section("inner"):
                    pass
        record("elsewhere", 2.5)
    outer = timer.root.find("outer")
    assert outer is not None and outer.count == 3 and outer.find("inner").count == 3
    assert timer.root.find("elsewhere").seconds == 2.5
    table = rows(timer.report())
    assert table["outer (x3)"][0] == 0 and table["inner (x3)"][0] == 1
    assert "Total" in table


def test_section_outside_a_timer_records_nothing():
    with section("nobody listens"):
        pass
    record("nor here", 1.0)  # no timer: nothing to fail


def test_compile_prints_passes_and_stages(capsys):
    import tilecraft as tc

    m = tc.compile(small_model(), timing=True)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    assert m(x).shape == (1, 8, 8, 8)
    err = capsys.readouterr().err
    assert "Execution time report" in err
    table = rows(err)
    # compile-model's passes under it, in pipeline order
    assert table["compile-model"][0] == 0
    names = [n for n in table if table[n][0] == 1]
    assert names.index("fuse-ops") < names.index("convert-graph-to-te") < names.index("convert-te-to-loop")
    assert table["load-model"][0] == 0
    # the model's timer is kept; the backend's stages are in it
    root = m.timing.root
    assert root.find("compile-model", "fuse-ops").count == 1
    assert root.seconds >= root.find("compile-model").seconds > 0


def test_compile_without_timing_prints_nothing(capsys):
    import tilecraft as tc

    tc.compile(small_model())
    assert "Execution time report" not in capsys.readouterr().err


def test_opt_timing_lists_each_pass(tmp_path, capsys):
    from tilecraft.tools.opt import main

    source = tmp_path / "add.mlir"
    source.write_text(
        "func.func @add(%A: memref<64xf32>, %B: memref<64xf32>) {\n"
        "  loop.for %i = 0 to 64 {\n"
        "    %a = memref.load %A[%i] : memref<64xf32>\n"
        "    memref.store %a, %B[%i] : memref<64xf32>\n"
        "  }\n"
        "  func.return\n"
        "}\n"
    )
    code = main([str(source), "-p", "loop-to-llvm", "--timing"])
    captured = capsys.readouterr()
    assert code in (0, None), captured.err
    table = rows(captured.err)
    # A pass with options not at their defaults is named with them.
    for name in ("parse", "loop-unroll{trivial-only=true}", "loop-vectorize", "convert-loop-to-llvm", "output"):
        assert name in table, (name, captured.err)
    assert "llvm.func @add" in captured.out


def test_opt_without_timing_prints_no_report(tmp_path, capsys):
    from tilecraft.tools.opt import main

    source = tmp_path / "empty.mlir"
    source.write_text("builtin.module {}\n")
    main([str(source)])
    assert "Execution time report" not in capsys.readouterr().err


def test_a_pass_label_shows_the_options_not_at_their_defaults():
    from tilecraft.transforms.loop_unroll import LoopUnrollPass
    from tilecraft.utils.compile_timing import pass_label

    assert pass_label(LoopUnrollPass()) == "loop-unroll"
    assert pass_label(LoopUnrollPass(trivial_only=True)) == "loop-unroll{trivial-only=true}"
    assert pass_label(LoopUnrollPass(max_iterations=4)) == "loop-unroll{max-iterations=4}"
