"""The accelerability analysis (analysis/accelerability.py): its verdicts are
partition-accel's, its reasons name the field and the value, its MAC share and
Amdahl speedup follow the formulas written out here; `tilecraft-analyze --accel`
and `--graph` (analysis/fused_graph.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import func

import tilecraft as tc
from tilecraft.analysis.accelerability import Accelerability, estimate_cycles, verdicts
from tilecraft.analysis.framework import AnalysisManager
from tilecraft.analysis.fused_graph import to_dot
from tilecraft.driver.context import make_context
from tilecraft.pipelines.compile_model import fused_module
from tilecraft.analysis.graph_costs import Roofline
from tilecraft.analysis.machine import Machine
from tilecraft.backends.accel.spec import default_spec, load_spec
from tilecraft.dialects import graph
from tilecraft.driver.compile_model import load_model
from tilecraft.driver.context import parse_text
from tilecraft.tools import analyze as tool
from tilecraft.transforms.partition_accel import TARGET_ATTR, PartitionAccelPass, fit_chain

MACHINE = Machine("test", 100.0, 10.0)  # 100 GFLOP/s, 10 GB/s
RNG = np.random.default_rng(7)


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def layers():
    """Seven GEMM layers, each kept or refused for its own reason (in order): a
    stride-2 conv the accelerator takes; a depthwise conv; a conv to 24 channels; a
    dilated conv; a 1x1 conv whose result reaches the dense through a flatten (so
    it is dequantized to float, not requantized); a dense of 256 -> 32 it takes (as
    a 1x1 conv); the classifier of 5 outputs."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=32),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4"], ["c4"], pads=[2, 2, 2, 2], dilations=[2, 2]),
        helper.make_node("Relu", ["c4"], ["r4"]),
        helper.make_node("Conv", ["r4", "w5"], ["c5"]),
        helper.make_node("Relu", ["c5"], ["r5"]),
        helper.make_node("Flatten", ["r5"], ["f"]),
        helper.make_node("Gemm", ["f", "fw1", "fb1"], ["d1"], transB=1),
        helper.make_node("Relu", ["d1"], ["s1"]),
        helper.make_node("Gemm", ["s1", "fw2"], ["y"], transB=1),
    ]
    inits = {
        "w1": randn(32, 16, 3, 3, scale=0.1), "b1": randn(32, scale=0.1), "w2": randn(32, 1, 3, 3, scale=0.3),
        "w3": randn(24, 32, 1, 1, scale=0.2), "w4": randn(16, 24, 3, 3, scale=0.1), "w5": randn(16, 16, 1, 1, scale=0.2),
        "fw1": randn(32, 256, scale=0.05), "fb1": randn(32, scale=0.1), "fw2": randn(5, 32, scale=0.2),
    }  # fmt: skip
    g = helper.make_graph(
        nodes, "layers", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return tc.quantize(model, [randn(1, 16, 8, 8) for _ in range(2)])


def accelerability(module, spec=None, **options):
    """The accelerability result of `module`, CPU times on MACHINE's roofline."""
    manager = AnalysisManager()
    manager.run(Roofline(MACHINE), module)
    return manager.run(Accelerability(spec, **options), module)


def signature(op) -> tuple:
    """A GEMM op by what it computes: its kind, input and weight shapes."""
    return op.name, graph.shape_of(op.operands[0].type), graph.shape_of(op.operands[1].type)


def test_accelerable_ops_are_exactly_those_partition_accel_outlines():
    q = load_model(layers())  # a copy, with the weight store that says what the weights are
    result = accelerability(q)
    reasons = {signature(f.op): f.values["reason"] for f in result.ops}
    assert reasons == {
        ("graph.conv2d", (1, 16, 8, 8), (32, 16, 3, 3)): None,
        ("graph.conv2d", (1, 32, 4, 4), (32, 1, 3, 3)):
            "depthwise (groups 32): the GEMM intrinsic reduces over all input channels",
        ("graph.conv2d", (1, 32, 4, 4), (24, 32, 1, 1)): "output channels 24 not a multiple of BLOCK_OUT 16",
        ("graph.conv2d", (1, 24, 4, 4), (16, 24, 3, 3)): "dilation (2, 2): the accelerator's windows are dense",
        ("graph.conv2d", (1, 16, 4, 4), (16, 16, 1, 1)):
            "its int32 result goes to graph.cast, not a requantize to int8 (the accelerator's output buffer is 8 "
            "bits wide)",
        ("graph.dense", (1, 256), (32, 256)): None,
        ("graph.dense", (1, 32), (5, 32)): "output features 5 not a multiple of BLOCK_OUT 16",
    }  # fmt: skip
    module = load_model(q)
    PartitionAccelPass().apply(Context(), module)
    kernels = [f for f in module.ops if isinstance(f, func.FuncOp) and TARGET_ATTR in f.attributes]
    outlined = [signature(op) for f in kernels for op in f.walk() if isinstance(op, graph.Conv2dOp | graph.DenseOp)]
    assert sorted(outlined) == sorted(s for s, reason in reasons.items() if reason is None)
    # MACs of the two it takes, from the shapes: N*K*C*R*S*P*Q and M*N*K
    taken = 1 * 32 * 16 * 3 * 3 * 4 * 4 + 1 * 32 * 256
    model = 32 * 16 * 9 * 16 + 32 * 9 * 16 + 24 * 32 * 16 + 16 * 24 * 9 * 16 + 16 * 16 * 16 + 32 * 256 + 5 * 32
    assert result.totals["accelerable_macs"] == taken and result.totals["macs"] == model
    assert result.totals["macs_fraction"] == pytest.approx(taken / model)


CASES = """
func.func @main(%x: tensor<1x16x4x4xi8>, %h: tensor<1x24x4x4xi8>, %a: tensor<1x16x4x4xf32>, %m: tensor<4x16xf32>, %n: tensor<16x4xf32>, %b: tensor<3x16x4x4xi8>) -> (tensor<1x16x4x4xi8>, tensor<1x16x12x4xi8>, tensor<1x16x4x4xi8>, tensor<1x16x4x4xf32>, tensor<4x4xf32>, tensor<1x16x4x4xi32>, tensor<1x16x4x4xi8>, tensor<3x16x4x4xi8>) {
  %w = graph.constant dense<1> : tensor<16x16x3x3xi8>
  %xi = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x16x3x3xi8>) -> tensor<16x16x3x3xi32>
  %ok = graph.conv2d %xi, %wi {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xi32>, tensor<16x16x3x3xi32>) -> tensor<1x16x4x4xi32>
  %okq = graph.requantize %ok {shift = 3 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %v = graph.constant dense<1> : tensor<16x16x17x17xi8>
  %vi = graph.cast %v {to = i32} : (tensor<16x16x17x17xi8>) -> tensor<16x16x17x17xi32>
  %xi2 = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %padded = graph.conv2d %xi2, %vi {pads = array<i64: 8, 8, 16, 8>} : (tensor<1x16x4x4xi32>, tensor<16x16x17x17xi32>) -> tensor<1x16x12x4xi32>
  %paddedq = graph.requantize %padded {shift = 3 : i64, to = i8} : (tensor<1x16x12x4xi32>) -> tensor<1x16x12x4xi8>
  %u = graph.constant dense<1> : tensor<16x24x1x1xi8>
  %hi = graph.cast %h {to = i32} : (tensor<1x24x4x4xi8>) -> tensor<1x24x4x4xi32>
  %ui = graph.cast %u {to = i32} : (tensor<16x24x1x1xi8>) -> tensor<16x24x1x1xi32>
  %narrow = graph.conv2d %hi, %ui : (tensor<1x24x4x4xi32>, tensor<16x24x1x1xi32>) -> tensor<1x16x4x4xi32>
  %narrowq = graph.requantize %narrow {shift = 3 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %fw = graph.constant dense<1.0> : tensor<16x16x1x1xf32>
  %float = graph.conv2d %a, %fw : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  %mm = graph.matmul %m, %n : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %xi3 = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wide = graph.conv2d %xi3, %wi {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xi32>, tensor<16x16x3x3xi32>) -> tensor<1x16x4x4xi32>
  %ww = graph.weight "w" : tensor<16x16x1x1xi8>
  %wwi = graph.cast %ww {to = i32} : (tensor<16x16x1x1xi8>) -> tensor<16x16x1x1xi32>
  %xi4 = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %unknown = graph.conv2d %xi4, %wwi : (tensor<1x16x4x4xi32>, tensor<16x16x1x1xi32>) -> tensor<1x16x4x4xi32>
  %unknownq = graph.requantize %unknown {shift = 3 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %bi = graph.cast %b {to = i32} : (tensor<3x16x4x4xi8>) -> tensor<3x16x4x4xi32>
  %batch = graph.conv2d %bi, %wi {pads = array<i64: 1, 1, 1, 1>} : (tensor<3x16x4x4xi32>, tensor<16x16x3x3xi32>) -> tensor<3x16x4x4xi32>
  %batchq = graph.requantize %batch {shift = 3 : i64, to = i8} : (tensor<3x16x4x4xi32>) -> tensor<3x16x4x4xi8>
  func.return %okq, %paddedq, %narrowq, %float, %mm, %wide, %unknownq, %batchq : tensor<1x16x4x4xi8>, tensor<1x16x12x4xi8>, tensor<1x16x4x4xi8>, tensor<1x16x4x4xf32>, tensor<4x4xf32>, tensor<1x16x4x4xi32>, tensor<1x16x4x4xi8>, tensor<3x16x4x4xi8>
}
"""


def spec_file(directory, **changes):
    """The default spec with `changes` (KEY=value), written where partition-accel can read it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "spec.json"
    path.write_text(json.dumps(default_spec().to_dict() | changes))
    return str(path)


def reasons_of(module, spec) -> dict[str, str | None]:
    return {f.label: f.values["reason"] for f in accelerability(module, spec).ops}


def test_each_reason_names_the_field_and_its_value(tmp_path):
    reasons = reasons_of(parse_text(CASES), default_spec())
    assert reasons == {
        "ok": None,
        "padded": "padding (8, 8, 16, 8) beyond LOAD's 4-bit pad fields (at most 15)",
        "narrow": "input channels 24 not a multiple of BLOCK_IN 16",
        "float": "conv2d on f32: not quantized to int8 (tc.quantize makes int8 chains)",
        "mm": "the accelerator has no kernel for graph.matmul (it runs conv2d and dense)",
        "wide": "its int32 result goes to func.return, not a requantize to int8 (the accelerator's output buffer "
                "is 8 bits wide)",
        "unknown": "its weight is not known when compiling (a constant, or a weight of the model's store)",
        "batch": None,  # BATCH 1 takes any batch
    }  # fmt: skip
    batch2 = spec_file(tmp_path / "batch2", LOG_BATCH=1)
    assert reasons_of(parse_text(CASES), load_spec(batch2))["batch"] == "batch 3 not a multiple of BATCH 2"
    small = spec_file(tmp_path / "small", LOG_WGT_BUFF_SIZE=11)  # 8 weight tiles: a 3x3 kernel needs 9
    assert reasons_of(parse_text(CASES), load_spec(small))["ok"] == (
        "even a 1x1-pixel tile needs 9 wgt_buffer elements; the spec's buffer holds 8"
    )
    # partition-accel outlines the chains (named after their requantize) the analysis takes, at each spec
    for spec in ("", batch2, small):
        module = parse_text(CASES)
        judged = reasons_of(module, load_spec(spec) if spec else default_spec())
        PartitionAccelPass(spec=spec).apply(Context(), module)
        calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
        assert sorted(c.results[0].name_hint for c in calls) == sorted(f"{n}q" for n, r in judged.items() if r is None)


def test_amdahl_from_roofline_times_and_the_estimated_cycles():
    module = parse_text(CASES)
    result = accelerability(module)

    def seconds(flops, moved):  # the roofline's bound: max(compute, memory) time
        return max(flops / 100e9, moved / 10e9)

    # `ok`: x cast to i32 (256 elements, 1 B in and 4 B out each), the conv (2 x 16x16x9 x 16
    # FLOPs; reads 1,024 B of x and 9,216 of w, writes 1,024), the requantize (4 B in, 1 out);
    # w's cast reads a constant only: folded when compiling, no time.
    chain_cpu = seconds(256, 256 * 5) + seconds(2 * 36864, 1024 + 9216 + 1024) + seconds(256, 256 * 5)
    ok = next(f.values for f in result.ops if f.label == "ok")
    assert ok["chain_cpu_s"] == pytest.approx(chain_cpu)
    # the load module moves 16 input tiles of 16 B and 9 weight tiles of 256 B at 8 B a
    # cycle after one 64-cycle latency, then the last store takes at least 65 cycles; the
    # compute module (144 GEMM steps, 5 x 16 ALU steps, 4 + 4 to fill) waits less
    assert ok["accel_cycles"] == (64 + (16 * 16 + 9 * 256) // 8) + 65 == 449
    assert ok["accel_s"] == pytest.approx(449 / 100e6)
    totals = result.totals
    roofline = AnalysisManager().run(Roofline(MACHINE), module)
    folded = {"wi", "vi", "ui", "wwi"}  # casts of constants and weights: computed when compiling
    cpu = sum(float(f.values["roofline_s"]) for f in roofline.ops if f.label not in folded)
    freed = sum(f.values["chain_cpu_s"] for f in result.ops if f.values["accelerable"])
    accel = sum(f.values["accel_s"] for f in result.ops if f.values["accelerable"])
    assert totals["cpu_s"] == pytest.approx(cpu)
    assert totals["speedup"] == pytest.approx(cpu / (cpu - freed + accel))
    assert totals["speedup_limit"] == pytest.approx(cpu / (cpu - freed))


def test_a_profile_replaces_the_roofline_where_it_has_the_op():
    module = parse_text(CASES)
    manager = AnalysisManager()
    labels = [f.label for f in manager.run(Roofline(MACHINE), module).ops]
    profile = {label: 1e-3 for label in labels}  # every op 1 ms on the CPU
    result = manager.run(Accelerability(profile=profile), module)
    ok = next(f.values for f in result.ops if f.label == "ok")
    assert ok["cpu_s"] == 1e-3 and ok["chain_cpu_s"] == 3e-3  # x's cast, the conv, the requantize
    assert result.totals["cpu_time"] == "profile"


def test_the_estimate_is_a_lower_bound_of_the_timing_model():
    """`cycles=simulated_cycles` takes the cycles the simulator counts for the kernels
    `tc.compile(target="accel")` runs; the closed form never exceeds them."""
    q = layers()
    runs = []
    from tilecraft.runtime.accel import simulated_cycles

    for cycles in (None, simulated_cycles):
        result = accelerability(q, cycles=cycles)
        runs.append([f.values["accel_cycles"] for f in result.ops if f.values["accelerable"]])
    estimated, simulated = runs
    assert result.totals["accel_time"] == "simulated"
    offloaded = tc.compile(q, target="accel")
    offloaded(randn(1, 16, 8, 8))
    assert simulated == [stats.cycles for stats in offloaded.stats]  # the chains in program order
    assert len(estimated) == 2 and all(0 < e <= s for e, s in zip(estimated, simulated))
    chain = fit_chain(next(f.op for f in result.ops if f.values["accelerable"]), default_spec())
    assert estimate_cycles(chain, default_spec()) == estimated[0]


def test_fused_graph_dot_by_fusion_kind_and_by_accelerability():
    q = layers()
    found = verdicts(q, default_spec())  # on the model as written, before the graph stages
    text = to_dot(fused_module(make_context(), q), found)
    assert text.startswith("digraph fused {") and text.endswith("}\n")
    # the depthwise conv's group: red, the reason in its label (wrapped) and tooltip
    assert ('[label="conv2d, relu\\nout-fusable\\nconv2d: depthwise (groups 32): the GEMM\\nintrinsic reduces over '
            'all input\\nchannels", tooltip="fused_conv2d_relu_1\\nconv2d: depthwise (groups 32): the GEMM intrinsic '
            'reduces over all input channels", fillcolor="#fc9272"]') in text  # fmt: skip
    # green: the two groups of the chains it takes (the stride-2 conv's and the dense's)
    assert text.count('nout-fusable\\naccelerator", ') == 2
    # pale green: a group that fuses the cast starting a chain with ops the CPU keeps
    assert 'label="requantize, cast\\ninjective\\npartly accelerator"' in text
    plain = to_dot(fused_module(make_context(), layers()))
    assert 'label="conv2d, relu\\nout-fusable", tooltip="fused_conv2d_relu", fillcolor="#fdae6b"' in plain
    assert "accelerator" not in plain


# -- tc.analyze(accel=...) and tilecraft-analyze --accel, --graph ---------------------------


def test_tc_analyze_takes_an_accelerator_spec(tmp_path):
    module = parse_text(CASES)
    expected = accelerability(module)
    for accel in ("default", default_spec(), spec_file(tmp_path, CLOCK_MHZ=100)):
        result = tc.analyze(module, [Roofline(MACHINE)], accel=accel)["accelerability"]
        assert [(f.label, f.values) for f in result.ops] == [(f.label, f.values) for f in expected.ops]
    slow = tc.analyze(module, [Roofline(MACHINE)], accel=spec_file(tmp_path, CLOCK_MHZ=50))["accelerability"]
    assert slow.totals["accel_s"] == pytest.approx(2 * expected.totals["accel_s"])


def run_tool(*argv, capsys) -> tuple[int, str, str]:
    code = tool.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_tool_accel_section_json_and_bad_specs(tmp_path, capsys):
    model = tmp_path / "cases.mlir"
    model.write_text(CASES)
    machine = tmp_path / "machine.json"
    machine.write_text('{"name": "test", "peak_gflops": 100, "bandwidth_gbs": 10}')
    out = tmp_path / "out.json"
    code, text, _ = run_tool(model, "--accel", "default", "--machine", machine, "--json", out, capsys=capsys)
    assert code == 0
    assert "accelerability on default (VTA): BATCH 1, BLOCK 16, 256 MACs a cycle at 100 MHz" in text
    assert "accelerable: 2 of 8 ops with multiply-adds" in text
    data = json.loads(out.read_text())["accelerability"]
    assert [op["name"] for op in data["ops"] if op["accelerable"]] == ["ok", "batch"]
    assert data["totals"]["accelerable_ops"] == 2
    code, _, err = run_tool(model, "--accel", tmp_path / "missing.json", capsys=capsys)
    assert code == 1 and err == f"tilecraft-analyze: error: {tmp_path / 'missing.json'}: cannot read the spec file: " \
        "No such file or directory\n"  # fmt: skip
    bad = spec_file(tmp_path, LOG_BLOCK="four")
    code, _, err = run_tool(model, "--accel", bad, capsys=capsys)
    assert code == 1 and err == f"tilecraft-analyze: error: {bad}:LOG_BLOCK: expected an integer, got 'four'\n"


def test_tool_graph_without_dot_writes_the_dot_and_says_how_to_install(tmp_path, capsys, monkeypatch):
    model = tmp_path / "cases.mlir"
    model.write_text(CASES)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    code, _, err = run_tool(model, "--analysis", "macs", "--graph", tmp_path / "fused.svg", capsys=capsys)
    assert code == 0 and not (tmp_path / "fused.svg").exists()
    assert (tmp_path / "fused.dot").read_text().startswith("digraph fused {")
    assert err.count("\n") == 1 and "apt install graphviz, brew install graphviz or conda install graphviz" in err
    code, _, err = run_tool(model, "--graph", tmp_path / "fused.pdf", capsys=capsys)
    assert code == 1 and "fused.pdf: a fused-graph picture is .dot, .svg, .png, not '.pdf'" in err


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_tool_graph_renders_svg_and_png_with_dot(tmp_path):
    model = tmp_path / "cases.mlir"
    model.write_text(CASES)
    machine = tmp_path / "machine.json"
    machine.write_text('{"name": "test", "peak_gflops": 100, "bandwidth_gbs": 10}')
    for name in ("fused.svg", "fused.png"):
        done = subprocess.run([sys.executable, "-m", "tilecraft.tools.analyze", str(model), "--analysis", "macs",
                               "--accel", "default", "--machine", str(machine), "--graph", str(tmp_path / name)],
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert "<svg" in (tmp_path / "fused.svg").read_text()
    assert (tmp_path / "fused.png").read_bytes().startswith(b"\x89PNG")
