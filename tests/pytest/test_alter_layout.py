"""alter-layout keeps every value: the graph evaluator gives the same numbers before
and after the pass (and after fold-constants, which folds what it leaves), the
transforms it inserts cancel inside a network, and a small ResNet compiled with
it matches onnxruntime. Blocked pooling and KN dense are also compiled directly."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

from tilecraft.dialects.graph_reference import evaluate, to_layout
from tilecraft.dialects import graph
from tilecraft.transforms.alter_layout import AlterLayoutPass
from tilecraft.transforms.fold_constants import FoldConstantsPass
from tilecraft.utils.diagnostics import verify_module
from tilecraft.utils.weights import store_of

from test_graph_passes import check_pass, main_func, ops_named, parse

RNG = np.random.default_rng(3)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def conv(name: str, x: str, w: str, shape_in, shape_w, shape_out, attrs: str = "", bias: str | None = None) -> str:
    t_in, t_w, t_out = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape_in, shape_w, shape_out))
    if bias is None:
        return f"%{name} = graph.conv2d %{x}, %{w} {attrs} : ({t_in}, {t_w}) -> {t_out}"
    return f"%{name} = graph.conv2d %{x}, %{w}, %{bias} {attrs} : ({t_in}, {t_w}, tensor<{shape_w[0]}xf32>) -> {t_out}"


# A small ResNet in graph IR: 3-channel stem (stride 2, bias), relu, max pool, a
# basic block with a per-channel scale and shift (batch_norm as canonicalize
# leaves it when it cannot fold), a downsampling block with a 1x1 stride-2 conv on
# the shortcut, global average pooling, flatten and a dense classifier.
RESNET = f"""
func.func @main(%x: tensor<1x3x32x32xf32>) -> tensor<1x10xf32> {{
  %w0 = graph.weight "stem.w" : tensor<16x3x5x5xf32>
  %b0 = graph.weight "stem.b" : tensor<16xf32>
  {conv("c0", "x", "w0", (1, 3, 32, 32), (16, 3, 5, 5), (1, 16, 16, 16), "{pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 2, 2>}", "b0")}
  %r0 = graph.relu %c0 : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %p0 = graph.max_pool2d %r0 {{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}} : (tensor<1x16x16x16xf32>) -> tensor<1x16x8x8xf32>
  %w1 = graph.weight "b1.w1" : tensor<16x16x3x3xf32>
  {conv("c1", "p0", "w1", (1, 16, 8, 8), (16, 16, 3, 3), (1, 16, 8, 8), "{pads = array<i64: 1, 1, 1, 1>}")}
  %s1 = graph.weight "b1.scale" : tensor<16x1x1xf32>
  %m1 = graph.mul %c1, %s1 : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %t1 = graph.weight "b1.shift" : tensor<1x16x1x1xf32>
  %a1 = graph.add %m1, %t1 : (tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %r1 = graph.clip %a1 {{min = 0.0 : f32, max = 6.0 : f32}} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %w2 = graph.weight "b1.w2" : tensor<16x16x3x3xf32>
  %b2 = graph.weight "b1.b2" : tensor<16xf32>
  {conv("c2", "r1", "w2", (1, 16, 8, 8), (16, 16, 3, 3), (1, 16, 8, 8), "{pads = array<i64: 1, 1, 1, 1>}", "b2")}
  %s2 = graph.add %c2, %p0 : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r2 = graph.relu %s2 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %w3 = graph.weight "b2.w1" : tensor<32x16x3x3xf32>
  %b3 = graph.weight "b2.b1" : tensor<32xf32>
  {conv("c3", "r2", "w3", (1, 16, 8, 8), (32, 16, 3, 3), (1, 32, 4, 4), "{pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}", "b3")}
  %r3 = graph.relu %c3 : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %w4 = graph.weight "b2.w2" : tensor<32x32x3x3xf32>
  {conv("c4", "r3", "w4", (1, 32, 4, 4), (32, 32, 3, 3), (1, 32, 4, 4), "{pads = array<i64: 1, 1, 1, 1>}")}
  %wd = graph.weight "b2.down" : tensor<32x16x1x1xf32>
  {conv("cd", "r2", "wd", (1, 16, 8, 8), (32, 16, 1, 1), (1, 32, 4, 4), "{strides = array<i64: 2, 2>}")}
  %s4 = graph.add %c4, %cd : (tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %r4 = graph.relu %s4 : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %ap = graph.avg_pool2d %r4 {{kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}} : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %g = graph.global_avg_pool2d %ap : (tensor<1x32x4x4xf32>) -> tensor<1x32x1x1xf32>
  %f = graph.flatten %g : (tensor<1x32x1x1xf32>) -> tensor<1x32xf32>
  %fw = graph.weight "fc.w" : tensor<10x32xf32>
  %fb = graph.weight "fc.b" : tensor<10xf32>
  %y = graph.dense %f, %fw, %fb : (tensor<1x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %y : tensor<1x10xf32>
}}
"""


def resnet_weights() -> dict[str, np.ndarray]:
    return {
        "stem.w": randn(16, 3, 5, 5, scale=0.3), "stem.b": randn(16),
        "b1.w1": randn(16, 16, 3, 3, scale=0.2), "b1.scale": randn(16, 1, 1), "b1.shift": randn(1, 16, 1, 1),
        "b1.w2": randn(16, 16, 3, 3, scale=0.2), "b1.b2": randn(16),
        "b2.w1": randn(32, 16, 3, 3, scale=0.2), "b2.b1": randn(32), "b2.w2": randn(32, 32, 3, 3, scale=0.2),
        "b2.down": randn(32, 16, 1, 1, scale=0.3), "fc.w": randn(10, 32, scale=0.3), "fc.b": randn(10),
    }  # fmt: skip


def layouts(module) -> list[tuple[str, str]]:
    return [(op.src, op.dst) for op in ops_named(module, "graph.layout_transform")]


def test_resnet_keeps_its_values_and_runs_blocked():
    module = check_pass(parse(RESNET, resnet_weights()), AlterLayoutPass(kn_dense=True), FoldConstantsPass())
    convs = ops_named(module, "graph.conv2d")
    assert [c.kernel_layout for c in convs] == ["OIHW3i16o"] + ["OIHW16i16o"] * 5
    assert all(c.out_layout == "NCHW16c" for c in convs)
    # The stem reads the NCHW input as it is; everything up to flatten stays
    # blocked, so the only transform left is the one back before flatten.
    assert layouts(module) == [("NCHW16c", "NCHW")]
    assert ops_named(module, "graph.layout_transform")[0].outputs[0].uses.get_length() == 1
    for name in ("graph.max_pool2d", "graph.avg_pool2d", "graph.global_avg_pool2d"):
        assert ops_named(module, name)[0].layout == "NCHW16c"
    # The classifier at batch 1 is a GEMV: it keeps its NK weight (dot products
    # stream each weight row once).
    (dense,) = ops_named(module, "graph.dense")
    assert dense.weight_layout == "NK"


GEMV = """
func.func @main(%x: tensor<1x{k}xf32>) -> tensor<1x8xf32> {{
  %w = graph.weight "w" : tensor<8x{k}xf32>
  %y = graph.dense %x, %w : (tensor<1x{k}xf32>, tensor<8x{k}xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}}
"""


@pytest.mark.parametrize("k, layout", [(32, "NK"), (24, "KN")])
def test_gemv_keeps_nk_where_its_k_splits_into_lanes(k, layout):
    """One row of x: NK dot products where K is whole 16-lane vectors; otherwise
    the NK path would transpose the weight per call, so KN."""
    weights = {"w": randn(8, k)}
    module = check_pass(parse(GEMV.format(k=k), weights), AlterLayoutPass())
    (dense,) = ops_named(module, "graph.dense")
    assert dense.weight_layout == layout
    x = randn(1, k)
    compiled, _ = compile_text(GEMV.format(k=k), weights)
    np.testing.assert_allclose(compiled(x), x @ weights["w"].T, rtol=1e-5, atol=1e-5)


NARROW = """
func.func @main(%x: tensor<6x{k}xf32>) -> tensor<6x{n}xf32> {{
  %w = graph.weight "w" : tensor<{n}x{k}xf32>
  %b = graph.weight "b" : tensor<{n}xf32>
  %y = graph.dense %x, %w, %b : (tensor<6x{k}xf32>, tensor<{n}x{k}xf32>, tensor<{n}xf32>) -> tensor<6x{n}xf32>
  func.return %y : tensor<6x{n}xf32>
}}
"""


@pytest.mark.parametrize("k, n, layout", [(32, 10, "NK"), (64, 20, "NK"), (32, 48, "KN"), (24, 10, "KN")])
def test_dense_narrower_than_whole_vectors_keeps_nk(k, n, layout):
    """N not whole 16-lane vectors and K whole ones: NK dot products (a KN tile
    would end in a masked vector), computed right with the bias."""
    weights = {"w": randn(n, k), "b": randn(n)}
    module = check_pass(parse(NARROW.format(k=k, n=n), weights), AlterLayoutPass())
    (dense,) = ops_named(module, "graph.dense")
    assert dense.weight_layout == layout
    x = randn(6, k)
    compiled, _ = compile_text(NARROW.format(k=k, n=n), weights)
    np.testing.assert_allclose(compiled(x), x @ weights["w"].T + weights["b"], rtol=1e-5, atol=1e-5)


PANELS = """
func.func @main(%x: tensor<{rows}x{k}xf32>) -> tensor<{rows}x{n}xf32> {{
  %w = graph.weight "w" : tensor<{n}x{k}xf32>
  %b = graph.weight "b" : tensor<{n}xf32>
  %y = graph.dense %x, %w, %b : (tensor<{rows}x{k}xf32>, tensor<{n}x{k}xf32>, tensor<{n}xf32>) -> tensor<{rows}x{n}xf32>
  %r = graph.relu %y : (tensor<{rows}x{n}xf32>) -> tensor<{rows}x{n}xf32>
  func.return %r : tensor<{rows}x{n}xf32>
}}
"""


@pytest.mark.parametrize("rows, k, n", [(13, 40, 192), (6, 64, 64), (2, 24, 128)])
def test_dense_weights_become_panels_where_64_divides_n(rows, k, n):
    """[N/64, K, 64] panels, computed right with the bias and relu fused, rows that
    the register tile does not divide (13), one panel, a K that is not whole vectors."""
    weights = {"w": randn(n, k), "b": randn(n)}
    text = PANELS.format(rows=rows, k=k, n=n)
    module = check_pass(parse(text, weights), AlterLayoutPass(), FoldConstantsPass())
    (dense,) = ops_named(module, "graph.dense")
    assert dense.weight_layout == "NK64n"
    assert graph.shape_of(dense.inputs[1].type) == (n // 64, k, 64)
    x = randn(rows, k)
    compiled, _ = compile_text(text, weights)
    expected = np.maximum(x @ weights["w"].T + weights["b"], 0)
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-4)


def test_pass_is_idempotent():
    module = parse(RESNET, resnet_weights())
    AlterLayoutPass().apply(None, module)
    once = str(module)
    check_pass(module, AlterLayoutPass())
    assert str(module) == once


@pytest.mark.parametrize("block", [4, 8, 16])
def test_other_blocks(block):
    module = check_pass(parse(RESNET, resnet_weights()), AlterLayoutPass(block=block))
    convs = ops_named(module, "graph.conv2d")
    assert all(c.out_layout == f"NCHW{block}c" for c in convs)


MLP = """
func.func @main(%x: tensor<6x24xf32>) -> tensor<6x8xf32> {
  %w1 = graph.weight "w1" : tensor<40x24xf32>
  %b1 = graph.weight "b1" : tensor<40xf32>
  %h = graph.dense %x, %w1, %b1 : (tensor<6x24xf32>, tensor<40x24xf32>, tensor<40xf32>) -> tensor<6x40xf32>
  %r = graph.gelu %h : (tensor<6x40xf32>) -> tensor<6x40xf32>
  %w2 = graph.weight "w2" : tensor<8x40xf32>
  %y = graph.dense %r, %w2 : (tensor<6x40xf32>, tensor<8x40xf32>) -> tensor<6x8xf32>
  func.return %y : tensor<6x8xf32>
}
"""


def test_mlp_dense_weights_become_kn():
    weights = {"w1": randn(40, 24), "b1": randn(40), "w2": randn(8, 40)}
    module = check_pass(parse(MLP, weights), AlterLayoutPass(kn_dense=True))
    denses = ops_named(module, "graph.dense")
    assert [d.weight_layout for d in denses] == ["KN", "KN"]
    assert [graph.shape_of(d.inputs[1].type) for d in denses] == [(24, 40), (40, 8)]
    # On by default; kn-dense=false keeps the NK weights.
    module = check_pass(parse(MLP, weights), AlterLayoutPass())
    assert [d.weight_layout for d in ops_named(module, "graph.dense")] == ["KN", "KN"]
    module = check_pass(parse(MLP, weights), AlterLayoutPass(kn_dense=False))
    assert not any("weight_layout" in d.properties for d in ops_named(module, "graph.dense"))


def test_values_between_blocked_ops_are_blocked_once():
    """A plain value read blocked by two convs is transformed once; a plain
    full-shape operand of a blocked mul is transformed in."""
    text = f"""
func.func @main(%x: tensor<2x16x6x6xf32>) -> (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) {{
  %w1 = graph.weight "w1" : tensor<16x16x3x3xf32>
  %w2 = graph.weight "w2" : tensor<16x16x1x1xf32>
  {conv("a", "x", "w1", (2, 16, 6, 6), (16, 16, 3, 3), (2, 16, 6, 6), "{pads = array<i64: 1, 1, 1, 1>}")}
  {conv("b", "x", "w2", (2, 16, 6, 6), (16, 16, 1, 1), (2, 16, 6, 6))}
  %e = graph.sigmoid %x : (tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %m = graph.mul %a, %e : (tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  func.return %m, %b : tensor<2x16x6x6xf32>, tensor<2x16x6x6xf32>
}}
"""
    module = check_pass(parse(text, {"w1": randn(16, 16, 3, 3), "w2": randn(16, 16, 1, 1)}), AlterLayoutPass())
    into_blocked = [op.inputs[0] for op in ops_named(module, "graph.layout_transform") if op.src == "NCHW"]
    # %x once (for both convs), and the sigmoid's result for the blocked mul.
    assert len(into_blocked) == 2 and len(set(into_blocked)) == 2


def test_layout_transforms_compose_and_fold():
    chain = """
func.func @main(%x: tensor<1x16x2x2xf32>) -> tensor<1x16x2x2xf32> {
  %t = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"} : (tensor<1x16x2x2xf32>) -> tensor<1x1x2x2x16xf32>
  %b = graph.layout_transform %t {src = "NCHW16c", dst = "NCHW8c"} : (tensor<1x1x2x2x16xf32>) -> tensor<1x2x2x2x8xf32>
  %p = graph.layout_transform %b {src = "NCHW8c", dst = "NCHW"} : (tensor<1x2x2x2x8xf32>) -> tensor<1x16x2x2xf32>
  func.return %p : tensor<1x16x2x2xf32>
}
"""
    module = check_pass(parse(chain), AlterLayoutPass())
    assert layouts(module) == []  # three transforms compose to none

    of_weight = """
func.func @main() -> tensor<1x4x2x2x4xf32> {
  %c = graph.weight "c" : tensor<1x16x2x2xf32>
  %t = graph.layout_transform %c {src = "NCHW", dst = "NCHW16c"} : (tensor<1x16x2x2xf32>) -> tensor<1x1x2x2x16xf32>
  %b = graph.layout_transform %t {src = "NCHW16c", dst = "NCHW4c"} : (tensor<1x1x2x2x16xf32>) -> tensor<1x4x2x2x4xf32>
  func.return %b : tensor<1x4x2x2x4xf32>
}
"""
    module = check_pass(parse(of_weight, {"c": randn(1, 16, 2, 2)}), AlterLayoutPass(), FoldConstantsPass())
    assert layouts(module) == []  # composed into one transform of a weight, then folded
    (w,) = ops_named(module, "graph.weight")
    store = store_of(module)
    np.testing.assert_array_equal(store[w.weight_name.data], to_layout(store["c"], "NCHW", "NCHW4c"))


# -- compiled: blocked pooling and KN dense through topi ----------------------------------


def compile_text(text: str, weights: dict[str, np.ndarray] | None = None):
    import tilecraft as tc

    module = parse(text, weights)
    return tc.compile(module), module


@pytest.mark.parametrize(
    "pool",
    [
        'graph.max_pool2d %t {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"}',
        'graph.max_pool2d %t {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, layout = "NCHW16c"}',
        'graph.avg_pool2d %t {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"}',
        'graph.avg_pool2d %t {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, count_include_pad = true, layout = "NCHW16c"}',
        'graph.avg_pool2d %t {kernel = array<i64: 2, 2>, layout = "NCHW16c"}',
        'graph.global_avg_pool2d %t {layout = "NCHW16c"}',
    ],
)
def test_blocked_pooling_compiles_to_the_evaluators_values(pool):
    import tilecraft as tc
    from tilecraft.transforms.infer_shapes import InferShapesPass

    text = """
func.func @main(%x: tensor<2x32x7x7xf32>) -> tensor<*xf32> {
  %t = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"} : (tensor<2x32x7x7xf32>) -> tensor<2x2x7x7x16xf32>
  %p = POOL : (tensor<2x2x7x7x16xf32>) -> tensor<*xf32>
  func.return %p : tensor<*xf32>
}
""".replace("POOL", pool)
    module = parse(text)
    InferShapesPass().apply(None, module)
    verify_module(module)
    x = randn(2, 32, 7, 7)
    (expected,) = evaluate(main_func(module), None, [x])
    assert expected.ndim == 5 and expected.shape[4] == 16
    np.testing.assert_allclose(tc.compile(module)(x), expected, rtol=1e-5, atol=1e-5)


def test_kn_dense_compiles():
    text = """
func.func @main(%x: tensor<5x48xf32>, %w: tensor<48x70xf32>, %b: tensor<70xf32>) -> tensor<5x70xf32> {
  %y = graph.dense %x, %w, %b {weight_layout = #graph<weight_layout KN>} : (tensor<5x48xf32>, tensor<48x70xf32>, tensor<70xf32>) -> tensor<5x70xf32>
  %r = graph.relu %y : (tensor<5x70xf32>) -> tensor<5x70xf32>
  func.return %r : tensor<5x70xf32>
}
"""
    compiled, _ = compile_text(text)
    x, w, b = randn(5, 48), randn(48, 70), randn(70)
    np.testing.assert_allclose(compiled(x, w, b), np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


# -- end to end: a small ResNet from ONNX, against onnxruntime -------------------------------


def resnet_onnx():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], {}

    def conv_bn(x, out, cin, cout, k, stride, relu=True):
        inits.update({
            f"{out}.w": randn(cout, cin, k, k, scale=(2 / (cin * k * k)) ** 0.5),
            f"{out}.s": 1 + randn(cout, scale=0.1), f"{out}.b": randn(cout, scale=0.1),
            f"{out}.m": randn(cout, scale=0.1), f"{out}.v": 1 + np.abs(randn(cout, scale=0.1)),
        })  # fmt: skip
        nodes.append(helper.make_node("Conv", [x, f"{out}.w"], [f"{out}.c"], pads=[k // 2] * 4, strides=[stride] * 2))
        bn_out = f"{out}.bn" if relu else out
        nodes.append(helper.make_node("BatchNormalization", [f"{out}.c", f"{out}.s", f"{out}.b", f"{out}.m", f"{out}.v"], [bn_out]))
        if relu:
            nodes.append(helper.make_node("Relu", [bn_out], [out]))

    conv_bn("x", "stem", 3, 16, 7, 2)
    nodes.append(helper.make_node("MaxPool", ["stem"], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 16
    for n, (cout, stride) in enumerate([(16, 1), (32, 2)]):
        conv_bn(x, f"b{n}.1", cin, cout, 3, stride)
        conv_bn(f"b{n}.1", f"b{n}.2", cout, cout, 3, 1, relu=False)
        shortcut = x
        if stride != 1 or cin != cout:
            conv_bn(x, f"b{n}.down", cin, cout, 1, stride, relu=False)
            shortcut = f"b{n}.down"
        nodes.append(helper.make_node("Add", [f"b{n}.2", shortcut], [f"b{n}.sum"]))
        nodes.append(helper.make_node("Relu", [f"b{n}.sum"], [f"b{n}"]))
        x, cin = f"b{n}", cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.update({"fc.w": randn(10, cin, scale=0.2), "fc.b": randn(10)})
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"], transB=1))
    g = helper.make_graph(
        nodes, "resnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), onnx


def kernel_calls_matching_onnxruntime(m, x, fuse: bool) -> list:
    """Compile the ONNX model `m`, check every output on input `x` against
    onnxruntime, and return the kernel calls of the compiled @main (at the loop
    level a call's result is its last argument)."""
    import onnxruntime as ort

    import tilecraft as tc

    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})
    compiled = tc.compile(m, fuse=fuse)
    got = compiled(x)
    for value, want in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(value, want, rtol=2e-4, atol=2e-4)
    main = next(f for f in compiled.module.ops if f.name == "func.func" and f.sym_name.data == "main")
    return [op for op in main.body.block.ops if op.name == "func.call"]


@pytest.mark.parametrize("fuse", [True, False])
def test_small_resnet_matches_onnxruntime(fuse):
    import onnxruntime as ort
    import tilecraft as tc

    m, _ = resnet_onnx()
    x = randn(1, 3, 32, 32)
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    compiled = tc.compile(m, fuse=fuse)
    assert "alter-layout" in compiled.passes
    np.testing.assert_allclose(compiled(x), expected, rtol=2e-4, atol=2e-4)

    # The kernels @main calls: blocked convs, one transform (before flatten). At the
    # loop level a call's result is its last argument.
    main = next(f for f in compiled.module.ops if f.name == "func.func" and f.sym_name.data == "main")
    calls = [op for op in main.body.block.ops if op.name == "func.call"]
    blocked_results = [c for c in calls if len(c.arguments[-1].type.get_shape()) == 5]
    assert len(blocked_results) >= 8
    if fuse:
        assert sum("layout_transform" in c.callee.string_value() for c in calls) == 1


def test_evaluator_agrees_on_the_whole_onnx_pipeline():
    """The ONNX model's graph before and after canonicalize + alter-layout."""
    from tilecraft.frontends.onnx import from_onnx
    from tilecraft.transforms.infer_shapes import InferShapesPass
    from xdsl.transforms.canonicalize import CanonicalizePass

    m, _ = resnet_onnx()
    module, _ = from_onnx(m)
    check_pass(module, InferShapesPass(), CanonicalizePass(), AlterLayoutPass(kn_dense=True), FoldConstantsPass())
    assert isinstance(main_func(module), FuncOp)


@pytest.mark.parametrize("fuse", [True, False])
def test_narrow_blocks_match_onnxruntime(fuse):
    """Channel counts that blocks of 16 do not divide run in blocks of 8 and 4:
    16 -> 24 (8), depthwise 24, grouped 24 -> 48 in 3 groups (8 per group in, 16
    out: blocks of 8), 48 -> 20 (4), 20 -> 20 with a residual add, a 3x3 conv of 20
    channels (4); channel concats of blocked values. The compiled convs run
    blocked, with 8- and 4-lane blocks, and match onnxruntime."""
    from onnx import TensorProto, helper, numpy_helper

    layers = [  # (name, input, cin, cout, kernel, groups)
        ("a", "x", 16, 24, 1, 1), ("b", "a", 24, 24, 3, 24), ("c", "b", 24, 48, 3, 3),
        ("d", "c", 48, 20, 1, 1), ("e", "d", 20, 20, 1, 1), ("f", "sum", 20, 20, 3, 1),
    ]  # fmt: skip
    nodes, inits = [], {}
    for name, x, cin, cout, k, groups in layers:
        inits[f"{name}.w"] = randn(cout, cin // groups, k, k, scale=(2 / (cin // groups * k * k)) ** 0.5)
        inits[f"{name}.b"] = randn(cout, scale=0.1)
        nodes.append(helper.make_node("Conv", [x, f"{name}.w", f"{name}.b"], [f"{name}.c"], group=groups,
                                      pads=[k // 2] * 4))  # fmt: skip
        nodes.append(helper.make_node("Relu", [f"{name}.c"], [name]))
        if name == "e":
            nodes.append(helper.make_node("Add", ["d", "e"], ["sum"]))
    # A channel concat of blocked values (16 and 24 channels: blocks of 8), and one
    # of 24 and 20 (4), on the blocks.
    nodes.append(helper.make_node("Concat", ["a", "x"], ["cat"], axis=1))
    nodes.append(helper.make_node("Concat", ["b", "f"], ["cat2"], axis=1))
    inits["g.w"] = randn(16, 40, 1, 1, scale=0.2)
    nodes.append(helper.make_node("Conv", ["cat", "g.w"], ["g"]))
    inits["h.w"] = randn(20, 44, 3, 3, scale=0.05)
    nodes.append(helper.make_node("Conv", ["cat2", "h.w"], ["h"], pads=[1] * 4))
    g = helper.make_graph(
        nodes, "narrow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 14, 14])],
        [helper.make_tensor_value_info("f", TensorProto.FLOAT, [1, 20, 14, 14]),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 16, 14, 14]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 20, 14, 14])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    calls = kernel_calls_matching_onnxruntime(m, randn(1, 16, 14, 14), fuse)
    lanes = {
        c.arguments[-1].type.get_shape()[-1] for c in calls if len(c.arguments[-1].type.get_shape()) == 5
    }
    assert {8, 4} <= lanes


def _shuffle_net_onnx():
    """A ShuffleNet-v2-like model whose channel counts blocks of 16 do not divide:
    a 3-channel stem to 29 channels (padded to 32), a stride-2 unit of 29 -> 58
    (depthwise 3x3/2 and 1x1 convs on both branches, padded to 64), a stride-1 unit
    (split in halves of 29, 1x1, depthwise 3x3, 1x1 with a residual add), each
    ending in a concat and a channel shuffle; a max pool and a clip (0 in its range)
    on padded values, a sigmoid and a clip to [0.5, 6] (neither keeps zeros), a mul
    by a per-channel constant, global average pooling and a 1x1 conv to 1000
    classes (padded to 1008)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], {}
    counter = iter(range(1000))

    def conv(x, cin, cout, k, stride=1, group=1, act="Relu"):
        n = next(counter)
        inits[f"w{n}"] = randn(cout, cin // group, k, k, scale=(2 / (cin // group * k * k)) ** 0.5)
        inits[f"b{n}"] = randn(cout, scale=0.1)
        nodes.append(helper.make_node("Conv", [x, f"w{n}", f"b{n}"], [f"c{n}"], group=group,
                                      pads=[k // 2] * 4, strides=[stride] * 2))  # fmt: skip
        if act is None:
            return f"c{n}"
        nodes.append(helper.make_node(act, [f"c{n}"], [f"a{n}"]))
        return f"a{n}"

    def shuffle(x, c, h):
        n = next(counter)
        inits[f"s{n}"] = np.array([1, 2, c // 2, h, h], np.int64)
        inits[f"t{n}"] = np.array([1, c, h, h], np.int64)
        nodes.append(helper.make_node("Reshape", [x, f"s{n}"], [f"r{n}"]))
        nodes.append(helper.make_node("Transpose", [f"r{n}"], [f"p{n}"], perm=[0, 2, 1, 3, 4]))
        nodes.append(helper.make_node("Reshape", [f"p{n}", f"t{n}"], [f"sh{n}"]))
        return f"sh{n}"

    x = conv("x", 3, 29, 3, 2)  # 16 x 16
    nodes.append(helper.make_node("MaxPool", [x], ["mp"], kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4))
    keep = conv(conv("mp", 29, 29, 3, 2, group=29, act=None), 29, 29, 1)  # 8 x 8
    y = conv(conv(conv("mp", 29, 29, 1), 29, 29, 3, 2, group=29, act=None), 29, 29, 1)
    nodes.append(helper.make_node("Concat", [keep, y], ["cat1"], axis=1))
    u1 = shuffle("cat1", 58, 8)
    inits["halves"] = np.array([29, 29], np.int64)
    nodes.append(helper.make_node("Split", [u1, "halves"], ["half_a", "half_b"], axis=1))
    y = conv(conv(conv("half_b", 29, 29, 1), 29, 29, 3, group=29, act=None), 29, 29, 1, act=None)
    nodes.append(helper.make_node("Add", [y, "half_b"], ["res"]))
    nodes.append(helper.make_node("Concat", ["half_a", "res"], ["cat2"], axis=1))
    u2 = shuffle("cat2", 58, 8)
    inits["lo"], inits["hi"], inits["lo2"] = np.float32(-1.0), np.float32(6.0), np.float32(0.5)
    nodes.append(helper.make_node("Clip", [conv(u2, 58, 58, 1, act=None), "lo", "hi"], ["clipped"]))
    z = conv("clipped", 58, 58, 1, act="Sigmoid")
    nodes.append(helper.make_node("Clip", [z, "lo2", "hi"], ["clipped2"]))
    inits["scale"] = randn(1, 58, 1, 1)
    nodes.append(helper.make_node("Mul", ["clipped2", "scale"], ["scaled"]))
    z = conv("scaled", 58, 58, 3)
    nodes.append(helper.make_node("GlobalAveragePool", [z], ["gap"]))
    logits = conv("gap", 58, 1000, 1, act=None)
    nodes.append(helper.make_node("Flatten", [logits], ["y"]))
    g = helper.make_graph(
        nodes, "shuffle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1000]),
         helper.make_tensor_value_info(u2, TensorProto.FLOAT, [1, 58, 8, 8])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("fuse", [True, False])
def test_padded_channels_match_onnxruntime(fuse):
    """Channel counts that blocks of 16 do not divide by a little (29, 58, 1000) run
    blocked with zero channels padding the last block: convs (1x1, 3x3, depthwise,
    strided), relu, max pool, a clip holding 0, a residual add and global pooling
    on padded values; concat, split and shuffle read them cropped. The result
    matches onnxruntime, and the convs run in 16-lane blocks only."""
    calls = kernel_calls_matching_onnxruntime(_shuffle_net_onnx(), randn(1, 3, 32, 32), fuse)
    convs = [c for c in calls if "conv2d" in c.callee.string_value()]
    blocked = [c.arguments[-1].type.get_shape() for c in convs]
    assert len(blocked) == 13 and {s[-1] for s in blocked} == {16}
    assert {s[1] * s[-1] for s in blocked} >= {32, 64, 1008}


def test_padded_channels_in_the_evaluator():
    """The graph before and after alter-layout (and fold-constants) gives the same
    numbers with padded blocks; without padding (max_padding=0) 58 channels take no
    blocks (neither 16, 8 nor 4 divides them) and 29 none either."""
    from tilecraft.frontends.onnx import from_onnx
    from tilecraft.transforms.infer_shapes import InferShapesPass
    from xdsl.transforms.canonicalize import CanonicalizePass

    module, _ = from_onnx(_shuffle_net_onnx())
    check_pass(module, InferShapesPass(), CanonicalizePass(), AlterLayoutPass(), FoldConstantsPass())
    convs = ops_named(module, "graph.conv2d")
    assert all(c.out_layout == "NCHW16c" for c in convs)
    depthwise = [c for c in convs if c.groups != 1]
    assert [c.groups for c in depthwise] == [32, 32, 32]
    assert ops_named(module, "graph.max_pool2d")[0].layout == "NCHW16c"
    # Sigmoid maps the zero channels to 0.5 and clip [0.5, 6] to 0.5: both read the
    # cropped NCHW value; the clip to [-1, 6] of a conv's result stays blocked.
    assert ops_named(module, "graph.sigmoid")[0].outputs[0].type.get_shape() == (1, 58, 8, 8)
    clips = ops_named(module, "graph.clip")
    assert [len(c.outputs[0].type.get_shape()) for c in clips] == [5, 4]

    module, _ = from_onnx(_shuffle_net_onnx())
    check_pass(module, InferShapesPass(), CanonicalizePass(), AlterLayoutPass(max_padding=0), FoldConstantsPass())
    assert {c.out_layout for c in ops_named(module, "graph.conv2d")} <= {"NCHW", "NCHW8c"}
