"""The analysis framework (analysis/framework.py) and the graph-level cost analyses
(analysis/graph_costs.py): dependencies, caching and invalidation; MAC counts
against formulas computed here from the ONNX graph; `tc.analyze` and
`tilecraft-analyze`."""

from __future__ import annotations

import json
import math

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper, shape_inference

import tilecraft as tc
from tilecraft.analysis import framework
from tilecraft.analysis.framework import Analysis, AnalysisError, AnalysisManager, register_analysis
from tilecraft.driver.context import parse_text
from tilecraft.tools import analyze as tool

SMALL = """
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %f = graph.flatten %r : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
  %fw = graph.weight "fc.weight" : tensor<10x256xf32>
  %d = graph.dense %f, %fw : (tensor<1x256xf32>, tensor<10x256xf32>) -> tensor<1x10xf32>
  func.return %d : tensor<1x10xf32>
}
"""


@pytest.fixture(autouse=True)
def _registry():
    """The analyses a test registers are gone after it."""
    saved = dict(framework.registered_analyses())
    yield
    framework._ANALYSES.clear()
    framework._ANALYSES.update(saved)


class CountingMacs(Analysis):
    """The built-in `macs`, counting its runs (a test's own analysis)."""

    name = "counting-macs"
    runs = 0

    def map(self, op, deps):
        return {"n": 1} if op.name == "graph.conv2d" else None

    def run(self, module, deps):
        type(self).runs += 1
        return super().run(module, deps)


def test_a_users_analysis_in_a_few_lines():
    @register_analysis
    class Convs(Analysis):
        name = "test-convs"
        requires = ("macs",)

        def map(self, op, deps):
            if op.name != "graph.conv2d":
                return None
            return {"convs": 1, "macs": deps["macs"].by_op()[op].values["macs"]}

    result = AnalysisManager().run("test-convs", parse_text(SMALL))
    assert result.totals == {"convs": 1, "macs": 4 * 64 * 3 * 9}
    assert [f.label for f in result.ops] == ["y"]


def test_results_are_cached_per_module_until_invalidated():
    register_analysis(CountingMacs)
    manager, module, other = AnalysisManager(), parse_text(SMALL), parse_text(SMALL)
    CountingMacs.runs = 0
    first = manager.run("counting-macs", module)
    assert manager.run("counting-macs", module) is first and CountingMacs.runs == 1
    manager.run("counting-macs", other)
    assert CountingMacs.runs == 2  # one instance, any number of modules
    manager.invalidate(module, preserved=["counting-macs"])
    assert manager.run("counting-macs", module) is first
    manager.invalidate(module)
    assert manager.run("counting-macs", module) is not first and CountingMacs.runs == 3


def test_dependencies_run_first_and_errors_name_both():
    manager = AnalysisManager()
    assert manager.order(get("intensity")()) == ["macs", "bytes", "intensity"]

    @register_analysis
    class A(Analysis):
        name = "test-a"
        requires = ("test-b",)

    @register_analysis
    class B(Analysis):
        name = "test-b"
        requires = ("test-a",)

    with pytest.raises(AnalysisError, match="'test-b' and 'test-a' require each other"):
        manager.run("test-a", parse_text(SMALL))

    @register_analysis
    class C(Analysis):
        name = "test-c"
        requires = ("no-such",)

    with pytest.raises(AnalysisError, match="'test-c' requires 'no-such', which is not registered"):
        manager.run("test-c", parse_text(SMALL))
    with pytest.raises(AnalysisError, match="unknown analysis 'mac'; did you mean 'macs'"):
        manager.run("mac", parse_text(SMALL))


def get(name):
    from tilecraft.analysis.framework import get_analysis

    return get_analysis(name)


def test_small_model_costs():
    results = tc.analyze(parse_text(SMALL))
    macs = results["macs"]
    assert macs.totals == {"macs": 6912 + 2560, "flops": 2 * (6912 + 2560) + 256}
    assert results["bytes"].totals["weights_bytes"] == (4 * 3 * 9 + 10 * 256) * 4
    assert results["op-histogram"].totals["graph.weight"] == 2
    # x (768 B) and y (1,024) at the conv; y and r at the relu; f and d (40) at the dense
    memory = results["memory"]
    assert [f.values["live_bytes"] for f in memory.ops] == [1792, 2048, 2048, 1064]
    assert memory.totals == {"peak_live_bytes": 2048}


BLOCKED = """
func.func @main(%x: tensor<1x2x8x8x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32>
  func.return %y : tensor<1x2x8x8x16xf32>
}
"""


def test_an_op_without_a_rule_is_unknown_not_zero():
    result = tc.analyze(parse_text(BLOCKED), "macs")["macs"]
    (conv,) = result.ops
    assert conv.values["macs"] is None and "macs" not in result.totals
    assert result.unknown == ["y (graph.conv2d): a blocked or Winograd conv (count the model before alter-layout)"]


def onnx_macs(model: onnx.ModelProto) -> int:
    """Multiply-adds of Conv, Gemm, MatMul and BatchNormalization nodes, from ONNX's
    own shape inference: conv N*K*C/groups*R*S*P*Q, gemm M*N*K, one per batch-norm element."""
    inferred = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]}  # fmt: skip
    shapes |= {t.name: list(t.dims) for t in model.graph.initializer}
    total = 0
    for node in model.graph.node:
        out = math.prod(shapes[node.output[0]])
        if node.op_type == "Conv":
            total += out * math.prod(shapes[node.input[1]][1:])
        elif node.op_type in ("Gemm", "MatMul"):
            a = shapes[node.input[0]]
            trans = next((at.i for at in node.attribute if at.name == "transA"), 0)
            total += out * (a[0] if trans else a[-1])
        elif node.op_type == "BatchNormalization":
            total += out
    return total


@pytest.mark.parametrize("name", ["resnet50", "squeezenet"])
def test_macs_of_zoo_models_match_the_formulas(name):
    from tilecraft.frontends.onnx import zoo

    model = zoo.load(name, seed=1)
    assert tc.analyze(model, "macs")["macs"].totals["macs"] == onnx_macs(model)


def test_macs_of_a_grouped_strided_conv_and_a_matmul():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 8, 9, 9])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 6, 5, 4])
    w = numpy_helper.from_array(np.zeros((6, 4, 3, 3), np.float32), "w")
    m = numpy_helper.from_array(np.zeros((5, 4), np.float32), "m")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("MatMul", ["c", "m"], ["y"]),
    ]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, m]), opset_imports=[helper.make_opsetid("", 17)])
    conv = 2 * 6 * 5 * 5 * (8 // 2) * 3 * 3
    matmul = 2 * 6 * 5 * 4 * 5
    assert onnx_macs(model) == conv + matmul
    assert tc.analyze(model, "macs")["macs"].totals["macs"] == conv + matmul


def test_the_tool_prints_a_table_and_writes_json_and_csv(tmp_path, capsys):
    source = tmp_path / "small.mlir"
    source.write_text(SMALL)
    assert tool.main([str(source), "--json", str(tmp_path / "a.json"), "--csv", str(tmp_path / "a.csv")]) == 0
    printed = capsys.readouterr().out
    assert "graph.conv2d" in printed and printed.splitlines()[-3].startswith("total")
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["totals"]["macs"] == 9472 and data["unknown"] == []
    assert [row["name"] for row in data["ops"]] == ["w", "y", "r", "f", "fw", "d"]  # program order
    assert {"name": "y", "op": "graph.conv2d", "macs": 6912}.items() <= data["ops"][1].items()
    assert (tmp_path / "a.csv").read_text().splitlines()[0].startswith("name,op,macs")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{model}", "--analysis", "flop"], "tilecraft-analyze: error: unknown analysis 'flop'"),
        (["{missing}"], "tilecraft-analyze: error: cannot read"),
        (["{model}", "--analysis", ","], "tilecraft-analyze: error: --analysis names no analysis"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, argv, message):
    source = tmp_path / "small.mlir"
    source.write_text(SMALL)
    argv = [a.format(model=source, missing=tmp_path / "none.onnx") for a in argv]
    assert tool.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and len(err.splitlines()) == 1


def test_a_pass_drops_the_results_it_does_not_preserve():
    from dataclasses import dataclass

    from xdsl.passes import ModulePass

    from tilecraft.driver.context import make_context

    @dataclass(frozen=True)
    class Nothing(ModulePass):
        name = "test-nothing"
        preserved_analyses = ("macs",)

        def apply(self, ctx, op):
            pass

    @dataclass(frozen=True)
    class Anything(ModulePass):
        name = "test-anything"

        def apply(self, ctx, op):
            pass

    manager, module = AnalysisManager(), parse_text(SMALL)
    macs, moved = manager.run("macs", module), manager.run("bytes", module)
    manager.apply(Nothing(), make_context(), module)
    assert manager.run("macs", module) is macs and manager.run("bytes", module) is not moved
    manager.apply(Anything(), make_context(), module)
    assert manager.run("macs", module) is not macs


def bench_module(name: str):
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    return importlib.import_module(name)


def test_macs_of_a_bert_layer_match_its_closed_form():
    """BERT-base's layer at sequence 128: Q, K, V and the output projection (4 s h h),
    the feed-forward (2 s h f) and attention's two products (2 heads s s h/heads)."""
    s, h, heads, f = 128, 768, 12, 3072
    model = bench_module("models").bert_layer(seq=s, hidden=h, heads=heads, ffn=f)
    expected = 4 * s * h * h + 2 * s * h * f + 2 * heads * s * s * (h // heads)
    assert tc.analyze(model, "macs")["macs"].totals["macs"] == expected == onnx_macs(model)


@pytest.mark.parametrize("builder", ["models.resnet18", "networks.mobilenet_v2"])
def test_macs_of_resnet18_and_mobilenet_v2_match_the_formulas(builder):
    module, name = builder.split(".")
    model = getattr(bench_module(module), name)()
    assert tc.analyze(model, "macs")["macs"].totals["macs"] == onnx_macs(model)


def test_the_roofline_of_a_described_machine(tmp_path, capsys):
    from tilecraft.analysis.graph_costs import Roofline
    from tilecraft.analysis.machine import Machine

    machine = Machine("test box", peak_gflops=100.0, bandwidth_gbs=10.0)  # ridge: 10 FLOPs per byte
    result = tc.analyze(parse_text(SMALL), ["macs", "bytes", Roofline(machine)])["roofline"]
    conv = result.ops[0]
    intensity = 13824 / (1200 + 1024)
    assert conv.values["bound"] == "memory" and conv.values["attainable_gflops"] == pytest.approx(10 * intensity)
    assert conv.values["roofline_s"] == pytest.approx(13824 / (10e9 * intensity))
    assert result.totals["memory_bound_ops"] == 4 and result.totals["compute_bound_ops"] == 0
    described = tmp_path / "machine.json"
    described.write_text(json.dumps({"name": "test box", "peak_gflops": 1.0, "bandwidth_gbs": 10.0}))
    source = tmp_path / "small.mlir"
    source.write_text(SMALL)
    png = tmp_path / "roofline.png"
    assert tool.main([str(source), "--machine", str(described), "--roofline", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "compute" in capsys.readouterr().out  # the conv, above this machine's ridge of 0.1


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"name": "x", "peak_gflops": 1}', "has no field 'bandwidth_gbs'"),
        ('{"name": "x", "peak_gflops": 0, "bandwidth_gbs": 1}', "field 'peak_gflops' must be a positive number, not 0"),
        ("[1, 2]", "must hold a JSON object"),
        ("{", "is not JSON"),
    ],
)
def test_a_bad_machine_description_is_one_line_naming_it(tmp_path, capsys, text, message):
    described = tmp_path / "machine.json"
    described.write_text(text)
    source = tmp_path / "small.mlir"
    source.write_text(SMALL)
    assert tool.main([str(source), "--machine", str(described)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tilecraft-analyze: error: ") and message in err and len(err.splitlines()) == 1


def test_the_host_is_measured_once_and_cached(tmp_path, monkeypatch):
    from tilecraft.analysis import machine

    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(tmp_path))
    first = machine.host_machine()
    assert first.peak_gflops > 0 and first.bandwidth_gbs > 0
    monkeypatch.setattr(machine, "probe", lambda: pytest.fail("measured again"))
    assert machine.host_machine() == first
    assert list((tmp_path / "machines").glob("*.json"))
