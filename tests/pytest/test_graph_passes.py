"""Graph passes keep what a function computes: each test evaluates a function with
the graph evaluator on random inputs before and after the pass and compares."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func, FuncOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

import tilecraft as tc
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.dialects import graph
from tilecraft.transforms.fold_constants import FoldConstantsPass
from tilecraft.transforms.fuse_ops import FuseOpsPass
from tilecraft.transforms.infer_shapes import InferShapesPass
from tilecraft.transforms.plan_memory import MemoryPlan, PlanMemoryPass, plan
from tilecraft.utils.diagnostics import LocatedParser, verify_module
from tilecraft.utils.weights import WeightStore, attach, store_of

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def context() -> Context:
    ctx = Context()
    for d in (Builtin, Func, graph.GRAPH):
        ctx.load_dialect(d)
    return ctx


def parse(text: str, weights: dict[str, np.ndarray] | None = None) -> ModuleOp:
    module = LocatedParser(context(), text).parse_module()
    if weights is not None:
        attach(module, WeightStore(weights))
    return module


def main_func(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


def random_inputs(f: FuncOp) -> list[np.ndarray]:
    return [rand(*a.type.get_shape()) for a in f.body.block.args]


def check_pass(module: ModuleOp, *passes: ModulePass, rtol: float = 1e-4, atol: float = 1e-5) -> ModuleOp:
    """Run `passes` on `module`, verifying it, and compare the evaluator's results."""
    f = main_func(module)
    inputs = random_inputs(f)
    before = evaluate(f, store_of(module), inputs)
    for p in passes:
        p.apply(context(), module)
        verify_module(module)
    after = evaluate(main_func(module), store_of(module), inputs)
    assert len(before) == len(after)
    for b, a in zip(before, after):
        assert b.shape == a.shape and b.dtype == a.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return module


def ops_named(module: ModuleOp, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


# -- infer-shapes, fold-constants ---------------------------------------------------------


def test_infer_shapes_then_fold_keeps_values():
    text = """
    func.func @main(%x: tensor<2x8xf32>) -> tensor<*xf32> {
      %w = graph.weight "fc.weight" : tensor<8x4xf32>
      %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<*xf32>
      %s = graph.weight "scale" : tensor<4xf32>
      %e = graph.exp %s : (tensor<4xf32>) -> tensor<*xf32>
      %d = graph.dense %x, %t : (tensor<2x8xf32>, tensor<*xf32>) -> tensor<*xf32>
      %m = graph.mul %d, %e : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
      func.return %m : tensor<*xf32>
    }"""
    module = parse(text, {"fc.weight": rand(8, 4), "scale": rand(4)})
    InferShapesPass().apply(context(), module)
    check_pass(module, FoldConstantsPass())
    assert not ops_named(module, "graph.transpose") and not ops_named(module, "graph.exp")
    store = store_of(module)
    assert store.changed and store["fc.weight.transpose"].shape == (4, 8)
    assert [op.value.get_type().get_shape() for op in ops_named(module, "graph.constant")] == [(4,)]


def test_fold_respects_max_inline_elements():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %e = graph.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      %y = graph.add %x, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }"""
    module = check_pass(parse(text, {}), FoldConstantsPass(max_inline_elements=2))
    (w,) = ops_named(module, "graph.weight")
    np.testing.assert_allclose(store_of(module)[w.weight_name.data], np.exp([1, 2, 3, 4]), rtol=1e-6)


# -- canonicalize: batch_norm and identities ----------------------------------------------------


def bn_weights(c: int = 8) -> dict[str, np.ndarray]:
    return {"bn.s": rand(c), "bn.b": rand(c), "bn.m": rand(c), "bn.v": np.abs(rand(c)) + 0.1}


def bn_text(producer: str, extra_result: bool = False) -> str:
    params = "\n".join(f'  %{p} = graph.weight "bn.{p}" : tensor<8xf32>' for p in "sbmv")
    results = "tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>" if extra_result else "tensor<1x8x6x6xf32>"
    returns = "%z, %y : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>" if extra_result else "%z : tensor<1x8x6x6xf32>"
    return f"""
func.func @main(%x: tensor<1x4x8x8xf32>) -> ({results}) {{
  %w = graph.weight "conv.weight" : tensor<8x4x3x3xf32>
  {producer}
{params}
  %z = graph.batch_norm %y, %s, %b, %m, %v {{epsilon = 1.0e-3 : f32}} : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  func.return {returns}
}}"""


CONV = "%y = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>"
CONV_BIAS = (
    '%c = graph.weight "conv.bias" : tensor<8xf32>\n'
    "  %y = graph.conv2d %x, %w, %c : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>"
)


@pytest.mark.parametrize("producer", [CONV, CONV_BIAS])
def test_batch_norm_folds_into_conv(producer):
    weights = {"conv.weight": rand(8, 4, 3, 3), "conv.bias": rand(8), **bn_weights()}
    module = check_pass(parse(bn_text(producer), weights), CanonicalizePass())
    assert not ops_named(module, "graph.batch_norm") and not ops_named(module, "graph.mul")
    (conv,) = ops_named(module, "graph.conv2d")
    assert len(conv.inputs) == 3
    assert store_of(module)["conv.weight.bn"].shape == (8, 4, 3, 3)


def test_batch_norm_after_shared_conv_scales_and_shifts():
    weights = {"conv.weight": rand(8, 4, 3, 3), **bn_weights()}
    module = check_pass(parse(bn_text(CONV, extra_result=True), weights), CanonicalizePass())
    assert len(ops_named(module, "graph.mul")) == 1 and len(ops_named(module, "graph.add")) == 1
    (conv,) = ops_named(module, "graph.conv2d")
    assert len(conv.inputs) == 2


def test_batch_norm_with_argument_parameters_and_then_folded():
    text = """
    func.func @main(%x: tensor<2x8x3x3xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8x3x3xf32> {
      %z = graph.batch_norm %x, %s, %b, %m, %v : (tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x3x3xf32>
      func.return %z : tensor<2x8x3x3xf32>
    }"""
    module = parse(text)
    f = main_func(module)
    x, s, b, m = rand(2, 8, 3, 3), rand(8), rand(8), rand(8)
    v = np.abs(rand(8)) + 0.1
    (before,) = evaluate(f, None, [x, s, b, m, v])
    CanonicalizePass().apply(context(), module)
    verify_module(module)
    (after,) = evaluate(f, None, [x, s, b, m, v])
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)


def test_dense_batch_norm_and_identities():
    text = """
    func.func @main(%x: tensor<5x16xf32>) -> tensor<5x8xf32> {
      %w = graph.weight "fc.weight" : tensor<8x16xf32>
      %r = graph.reshape %x {shape = array<i64: 5, 16>} : (tensor<5x16xf32>) -> tensor<5x16xf32>
      %y = graph.dense %r, %w : (tensor<5x16xf32>, tensor<8x16xf32>) -> tensor<5x8xf32>
      %s = graph.weight "bn.s" : tensor<8xf32>
      %b = graph.weight "bn.b" : tensor<8xf32>
      %m = graph.weight "bn.m" : tensor<8xf32>
      %v = graph.weight "bn.v" : tensor<8xf32>
      %z = graph.batch_norm %y, %s, %b, %m, %v : (tensor<5x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
      %one = graph.constant dense<1.0> : tensor<8xf32>
      %o = graph.mul %z, %one : (tensor<5x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
      func.return %o : tensor<5x8xf32>
    }"""
    module = check_pass(parse(text, {"fc.weight": rand(8, 16), **bn_weights()}), CanonicalizePass())
    assert [op.name for op in main_func(module).body.block.ops] == [
        "graph.weight", "graph.constant", "graph.dense", "func.return"
    ]  # fmt: skip


def test_canonicalize_folds_small_values_and_leaves_the_store_alone():
    """canonicalize folds through the same op folders as fold-constants, but only
    results small enough to be inline constants: it adds nothing to the store."""
    text = """
    func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %s = graph.weight "scale" : tensor<8xf32>
      %e = graph.exp %s : (tensor<8xf32>) -> tensor<8xf32>
      %w = graph.weight "big" : tensor<4x8xf32>
      %n = graph.neg %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %m = graph.mul %x, %e : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %y = graph.add %m, %n : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      func.return %y : tensor<4x8xf32>
    }"""
    module = check_pass(parse(text, {"scale": rand(8), "big": rand(4, 8)}), CanonicalizePass())
    assert not ops_named(module, "graph.exp") and len(ops_named(module, "graph.neg")) == 1
    assert not store_of(module).changed
    check_pass(module, FoldConstantsPass())
    assert not ops_named(module, "graph.neg") and store_of(module)["big.neg"].shape == (4, 8)


def test_batch_norm_after_a_layout_transform_scales_and_shifts():
    """batch_norm reads a blocked conv2d through a layout_transform: its producer
    is no conv2d, so it becomes a scale and shift and the conv keeps its weight."""
    text = """
    func.func @main(%x: tensor<1x1x4x4x16xf32>) -> tensor<1x16x4x4xf32> {
      %w = graph.weight "w" : tensor<1x1x1x1x16x16xf32>
      %y = graph.conv2d %x, %w {data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x1x4x4x16xf32>, tensor<1x1x1x1x16x16xf32>) -> tensor<1x1x4x4x16xf32>
      %t = graph.layout_transform %y {src = "NCHW16c", dst = "NCHW"} : (tensor<1x1x4x4x16xf32>) -> tensor<1x16x4x4xf32>
      %s = graph.weight "bn.s" : tensor<16xf32>
      %b = graph.weight "bn.b" : tensor<16xf32>
      %m = graph.weight "bn.m" : tensor<16xf32>
      %v = graph.weight "bn.v" : tensor<16xf32>
      %z = graph.batch_norm %t, %s, %b, %m, %v : (tensor<1x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
      func.return %z : tensor<1x16x4x4xf32>
    }"""
    weights = {"w": rand(1, 1, 1, 1, 16, 16), **bn_weights(16)}
    module = check_pass(parse(text, weights), CanonicalizePass())
    assert not ops_named(module, "graph.batch_norm")
    assert len(ops_named(module, "graph.mul")) == 1 and len(ops_named(module, "graph.conv2d")[0].inputs) == 2


# -- fuse-ops -------------------------------------------------------------------------------

UNARY = ["relu", "tanh", "sigmoid", "neg"]


@st.composite
def random_graphs(draw) -> str:
    """A random function on [4, 8] and [4, 1] values: elementwise, broadcast,
    dense (anchor), softmax (opaque) and reduce_sum (reduction) ops."""
    values: list[tuple[str, str]] = [("%x", "4x8"), ("%y", "4x8")]
    lines = []
    for n in range(draw(st.integers(1, 12))):
        name = f"%v{n}"
        kind = draw(st.sampled_from(["unary", "binary", "dense", "softmax", "reduce"]))
        a, ta = values[draw(st.integers(0, len(values) - 1))]
        if kind == "unary":
            op = draw(st.sampled_from(UNARY))
            lines.append(f"{name} = graph.{op} {a} : (tensor<{ta}xf32>) -> tensor<{ta}xf32>")
            values.append((name, ta))
        elif kind == "binary":
            b, tb = values[draw(st.integers(0, len(values) - 1))]
            t = "4x8" if "4x8" in (ta, tb) else "4x1"
            op = draw(st.sampled_from(["add", "mul"]))
            lines.append(f"{name} = graph.{op} {a}, {b} : (tensor<{ta}xf32>, tensor<{tb}xf32>) -> tensor<{t}xf32>")
            values.append((name, t))
        elif ta == "4x1":
            continue
        elif kind == "dense":
            lines.append(f"{name} = graph.dense {a}, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>")
            values.append((name, "4x8"))
        elif kind == "softmax":
            lines.append(f"{name} = graph.softmax {a} : (tensor<4x8xf32>) -> tensor<4x8xf32>")
            values.append((name, "4x8"))
        else:
            lines.append(f"{name} = graph.reduce_sum {a} {{axes = array<i64: 1>}} : (tensor<4x8xf32>) -> tensor<4x1xf32>")
            values.append((name, "4x1"))
    computed = values[2:] or values[:1]
    outs = [computed[-1]] + draw(st.lists(st.sampled_from(computed), max_size=2, unique=True))
    outs = list(dict.fromkeys(outs))
    body = "\n  ".join(lines)
    return f"""
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> ({", ".join(f"tensor<{t}xf32>" for _, t in outs)}) {{
  %w = graph.weight "w" : tensor<8x8xf32>
  {body}
  func.return {", ".join(v for v, _ in outs)} : {", ".join(f"tensor<{t}xf32>" for _, t in outs)}
}}"""


def check_groups(module: ModuleOp, max_depth: int) -> None:
    f = main_func(module)
    for op in f.body.block.ops:
        assert isinstance(op, (graph.FusedOp, graph.WeightOp, graph.ConstantOp)) or op.name == "func.return", op.name
        if isinstance(op, graph.FusedOp):
            members = list(op.body.block.ops)[:-1]
            assert 1 <= len(members) <= max_depth
            assert sum(m.has_trait(graph.ComplexOutFusable) for m in members) <= 1
            assert len(members) == 1 or not any(m.has_trait(graph.Opaque) for m in members)
            for r in op.outputs:
                assert r.uses, "a group yields only values used outside it"


@settings(max_examples=60, deadline=None)
@given(text=random_graphs(), max_depth=st.sampled_from([2, 3, 16]), enabled=st.booleans())
def test_fuse_ops_random_graphs(text, max_depth, enabled):
    module = check_pass(parse(text, {"w": rand(8, 8) * 0.3}), FuseOpsPass(max_depth=max_depth, enabled=enabled))
    check_groups(module, max_depth)
    if not enabled:
        assert all(len(op.body.block.ops) == 2 for op in ops_named(module, "graph.fused"))


def test_cnn_pipeline_canonicalize_fold_fuse():
    """conv -> batch_norm -> relu -> max_pool -> conv -> add (residual) -> relu ->
    global pool -> flatten -> dense: after the graph pipeline, conv+bn+relu is one
    kernel and values match."""
    text = """
    func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x10xf32> {
      %w1 = graph.weight "c1.w" : tensor<8x4x3x3xf32>
      %s = graph.weight "bn.s" : tensor<8xf32>
      %b = graph.weight "bn.b" : tensor<8xf32>
      %m = graph.weight "bn.m" : tensor<8xf32>
      %v = graph.weight "bn.v" : tensor<8xf32>
      %c1 = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
      %n1 = graph.batch_norm %c1, %s, %b, %m, %v : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      %r1 = graph.relu %n1 : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
      %p = graph.max_pool2d %r1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
      %w2 = graph.weight "c2.w" : tensor<8x8x3x3xf32>
      %c2 = graph.conv2d %p, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
      %a = graph.add %c2, %p : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
      %r2 = graph.relu %a : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
      %g = graph.global_avg_pool2d %r2 : (tensor<1x8x4x4xf32>) -> tensor<1x8x1x1xf32>
      %f = graph.flatten %g : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
      %wd = graph.weight "fc.w" : tensor<10x8xf32>
      %d = graph.dense %f, %wd : (tensor<1x8xf32>, tensor<10x8xf32>) -> tensor<1x10xf32>
      func.return %d : tensor<1x10xf32>
    }"""
    weights = {"c1.w": rand(8, 4, 3, 3), "c2.w": rand(8, 8, 3, 3), "fc.w": rand(10, 8), **bn_weights()}
    module = check_pass(parse(text, weights), CanonicalizePass(), FoldConstantsPass(), FuseOpsPass())
    names = [op.group_name.data for op in ops_named(module, "graph.fused")]
    assert names == [
        "fused_conv2d_relu", "fused_max_pool2d", "fused_conv2d_add_relu",
        "fused_global_avg_pool2d", "fused_flatten", "fused_dense",
    ]  # fmt: skip (a reduction takes no consumers, an anchor no producers: flatten is alone)
    check_groups(module, 16)


@settings(max_examples=30, deadline=None)
@given(text=random_graphs(), max_depth=st.sampled_from([2, 16]))
def test_fusion_analysis_changes_nothing_and_fuse_ops_forms_its_groups(text, max_depth):
    """plan_fusion only reads the IR; fuse-ops forms exactly the groups it plans."""
    from tilecraft.analysis.fusion import plan_fusion
    from tilecraft.transforms.fuse_ops import erase_dead_nodes

    module = parse(text)
    block = main_func(module).body.block
    erase_dead_nodes(block)
    before = str(module)
    plan = plan_fusion(block, max_depth)
    assert str(module) == before
    grouped = [op for grp in plan.groups for op in grp.ops]
    assert len(grouped) == len(set(grouped)) and set(grouped) == {op for op in block.ops if isinstance(op, graph.GraphOp)}
    planned = [(grp.name, [op.name for op in grp.ops]) for grp in plan.groups]
    FuseOpsPass(max_depth=max_depth).apply(context(), module)
    formed = [(f.group_name.data, [op.name for op in f.body.block.ops][:-1]) for f in ops_named(module, "graph.fused")]
    assert formed == planned


# -- plan-memory -------------------------------------------------------------------------------


def mlp_text(layers: int, width: int = 256) -> str:
    lines, prev = [], "%x"
    for n in range(layers):
        lines.append(f"%d{n} = graph.dense {prev}, %w : (tensor<1x{width}xf32>, tensor<{width}x{width}xf32>) -> tensor<1x{width}xf32>")
        lines.append(f"%r{n} = graph.relu %d{n} : (tensor<1x{width}xf32>) -> tensor<1x{width}xf32>")
        prev = f"%r{n}"
    body = "\n  ".join(lines)
    return f"""
func.func @main(%x: tensor<1x{width}xf32>) -> tensor<1x{width}xf32> {{
  %w = graph.weight "w" : tensor<{width}x{width}xf32>
  {body}
  func.return {prev} : tensor<1x{width}xf32>
}}"""


@pytest.mark.parametrize("enabled", [True, False])
def test_mlp_planned_at_most_half_the_naive_sum(enabled):
    module = parse(mlp_text(6), {"w": rand(256, 256) * 0.1})
    check_pass(module, FuseOpsPass(enabled=enabled), PlanMemoryPass())
    f = main_func(module)
    arena, naive = f.attributes["tc.arena_bytes"].value.data, f.attributes["tc.naive_bytes"].value.data
    memory = plan(f)
    assert (memory.arena_bytes, memory.naive_bytes) == (arena, naive)
    assert arena == 2 * 1024 and arena * 2 <= naive


def _holders(v, memory: MemoryPlan) -> set:
    """`v` and the in-place concats that hold it (through nesting)."""
    found = {v}
    while v in memory.parts:
        v = memory.parts[v][0]
        found.add(v)
    return found


def assert_no_overlap(memory: MemoryPlan) -> None:
    planned = [v for v, o in memory.offsets.items() if o >= 0]
    for v in planned:
        o = memory.offsets[v]
        assert o % 64 == 0 and o + memory.sizes[v] <= memory.arena_bytes
    for n, v in enumerate(planned):
        for u in planned[n + 1 :]:
            if v in _holders(u, memory) or u in _holders(v, memory):  # an in-place concat and its part
                continue
            (d1, l1), (d2, l2) = memory.live[v], memory.live[u]
            if d1 <= l2 and d2 <= l1:  # alive at one time (a kernel's inputs and outputs too)
                o1, o2 = memory.offsets[v], memory.offsets[u]
                assert o1 + memory.sizes[v] <= o2 or o2 + memory.sizes[u] <= o1, (v, u)


@st.composite
def random_concat_graphs(draw) -> str:
    """A random function on [1, 16] values (64 bytes) with concats of two of them or
    of an earlier concat and one (read back through slices): chains, shared
    operands, operands that are arguments."""
    values, concats, lines = ["%x"], [], []
    for n in range(draw(st.integers(2, 14))):
        name = f"%v{n}"
        kind = draw(st.sampled_from(["unary", "add", "concat", "concat", "nest"]))
        a = values[draw(st.integers(min(1, len(values) - 1), len(values) - 1))]  # the argument now and then
        b = values[draw(st.integers(0, len(values) - 1))]
        if kind == "unary":
            lines.append(f"{name} = graph.{draw(st.sampled_from(UNARY))} {a} : (tensor<1x16xf32>) -> tensor<1x16xf32>")
        elif kind == "add":
            lines.append(f"{name} = graph.add {a}, {b} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>")
        else:
            (c, width) = draw(st.sampled_from(concats)) if kind == "nest" and concats else (b, 16)
            t = f"tensor<1x{width + 16}xf32>"
            lines.append(f"{name}c = graph.concat {c}, {a} {{axis = 1 : i64}} : (tensor<1x{width}xf32>, tensor<1x16xf32>) -> {t}")
            start = draw(st.sampled_from([0, width]))
            lines.append(f"{name} = graph.slice {name}c {{starts = array<i64: {start}>, ends = array<i64: {start + 16}>, axes = array<i64: 1>}} : ({t}) -> tensor<1x16xf32>")
            concats.append((f"{name}c", width + 16))
        values.append(name)
    outs = list(dict.fromkeys([values[-1]] + draw(st.lists(st.sampled_from(values[1:]), max_size=2))))
    body = "\n  ".join(lines)
    types = ", ".join("tensor<1x16xf32>" for _ in outs)
    return f"""
func.func @main(%x: tensor<1x16xf32>) -> ({types}) {{
  {body}
  func.return {", ".join(outs)} : {types}
}}"""


@settings(max_examples=60, deadline=None)
@given(text=random_concat_graphs(), enabled=st.booleans())
def test_in_place_concats_never_overlap_live_values_and_compute_the_same(text, enabled):
    """concat-in-place then plan-memory: no two values alive at once share bytes but
    an in-place concat and its parts, each part at its offset in the concat; the
    compiled function computes what the graph reference does."""
    from tilecraft.transforms.concat_in_place import ConcatInPlacePass

    module = parse(text)
    FuseOpsPass(enabled=enabled).apply(context(), module)
    ConcatInPlacePass().apply(context(), module)
    PlanMemoryPass().apply(context(), module)
    verify_module(module)
    memory = plan(main_func(module))
    assert_no_overlap(memory)
    for part, (concat, at) in memory.parts.items():
        assert memory.offsets[part] == memory.offsets[concat] + at
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    expected = evaluate(main_func(parse(text)), WeightStore(), [x])
    got = tc.compile(parse(text))(x)
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(text=random_graphs(), enabled=st.booleans())
def test_plan_memory_random_graphs_never_overlap_live_values(text, enabled):
    module = parse(text, {"w": rand(8, 8) * 0.3})
    FuseOpsPass(enabled=enabled).apply(context(), module)
    PlanMemoryPass().apply(context(), module)
    verify_module(module)
    f = main_func(module)
    memory = plan(f)
    assert_no_overlap(memory)
    assert memory.arena_bytes <= memory.naive_bytes
    returned = set(f.body.block.last_op.operands)
    for op in f.body.block.ops:
        if isinstance(op, graph.FusedOp):
            offsets = list(op.attributes["tc.offsets"].get_values())
            assert offsets == [memory.offsets[r] for r in op.outputs]
            assert all((o == -1) == (r in returned) for o, r in zip(offsets, op.outputs))
