"""A plugin extends tilecraft without touching it (docs/guide/extending.md).

The plugin, tests/filecheck/tools/Inputs/plugin (a `myplugin` dialect with one
graph-level op, a pattern pass `scale-relus{alpha=...}`, a te strategy for the op,
and an `xdsl.universe` entry point in its dist-info), is copied into a temporary
directory, which goes on `sys.path` (PYTHONPATH for the tools): importlib.metadata
then finds its entry point as it would an installed package's, and the venv is left
as it was. tests/filecheck/tools/plugin*.mlir use it through tilecraft-opt.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import irdl_op_definition, operand_def, traits_def
from xdsl.rewriter import Rewriter

import tilecraft as tc
from tilecraft import registry
from tilecraft.driver.context import parse_text
from tilecraft.dialects import graph
from tilecraft.frontends import te
from tilecraft.lowering.convert_graph_to_te import convert_graph_to_te
from tilecraft.topi import strategy
from tilecraft.utils.diagnostics import OpError

PLUGIN = Path(__file__).resolve().parents[1] / "filecheck" / "tools" / "Inputs" / "plugin"
BIN_DIR = Path(sys.executable).parent
RNG = np.random.default_rng(0)

DENSE_RELU = """\
func.func @main(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""

CONV_RELU_ADD = """\
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %c = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %y = graph.relu %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %z = graph.add %y, %r : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %o = graph.relu %z : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %o : tensor<1x4x8x8xf32>
}
"""


def _forget_modules(prefix: str) -> None:
    for name in [m for m in sys.modules if m == prefix or m.startswith(prefix + ".")]:
        del sys.modules[name]


@pytest.fixture
def strategies(monkeypatch) -> None:
    """register_strategy writes these tables: the test gets copies of its own."""
    monkeypatch.setattr(strategy, "COMPUTES", dict(strategy.COMPUTES))
    monkeypatch.setattr(strategy, "ANCHOR_SCHEDULES", dict(strategy.ANCHOR_SCHEDULES))


@pytest.fixture
def site(tmp_path, monkeypatch, strategies) -> Path:
    """A directory holding the plugin as a package with its dist-info, on sys.path;
    afterwards the plugin's modules and its strategy are forgotten again."""
    root = tmp_path / "site"
    shutil.copytree(PLUGIN, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(root))
    yield root
    _forget_modules("myplugin")
    _forget_modules("clashplugin")


def write_plugin(root: Path, name: str, universe_source: str) -> None:
    """A one-module plugin `name` whose `UNIVERSE` is `universe_source`."""
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text(universe_source)
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[xdsl.universe]\n{name} = {name}:UNIVERSE\n")


def opt(site: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [str(BIN_DIR / "tilecraft-opt"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def scale_relus(alpha: float):
    from myplugin.scale_relus import ScaleRelusPass

    return ScaleRelusPass(alpha=alpha)


# -- discovery -------------------------------------------------------------------------


def test_the_plugin_is_found_and_said_where_from(site):
    found = registry.providers()
    (plugin,) = registry.plugins(found)
    assert (plugin.name, plugin.package, plugin.value) == ("myplugin", "myplugin 0.1.0", "myplugin:UNIVERSE")
    multiverse = registry.get_multiverse(found)
    assert multiverse.all_dialects["myplugin"]().name == "myplugin"
    assert multiverse.all_passes["scale-relus"]().name == "scale-relus"
    assert "graph" in multiverse.all_dialects and "arith" in multiverse.all_dialects


def test_no_plugin_without_it():
    assert registry.plugins() == []


def test_tilecraft_opt_lists_and_runs_the_plugin(site):
    help_text = opt(site, "--help")
    assert help_text.returncode == 0, help_text.stderr
    lines = help_text.stdout.splitlines()
    start = lines.index("plugin 'myplugin' (package myplugin 0.1.0, myplugin:UNIVERSE):")
    assert lines[start + 1 : start + 4] == ["  dialects: myplugin", "  passes:", "    scale-relus"]
    result = opt(site, "-p", "scale-relus{alpha=2.0}", stdin=DENSE_RELU)
    assert result.returncode == 0, result.stderr
    assert "myplugin.scaled_relu %d {alpha = 2.000000e+00 : f32}" in result.stdout
    assert "graph.relu" not in result.stdout


# -- name clashes ----------------------------------------------------------------------

CLASH = """\
from xdsl.ir import Dialect
from xdsl.universe import Universe

UNIVERSE = Universe(all_dialects={"myplugin": lambda: Dialect("myplugin", [])})
"""

PASS_CLASH = """\
from xdsl.universe import Universe

UNIVERSE = Universe(all_passes={"fuse-ops": lambda: None})
"""


def test_two_dialects_of_one_name(site):
    write_plugin(site, "clashplugin", CLASH)
    with pytest.raises(registry.PluginError) as info:
        registry.get_multiverse()
    assert str(info.value) == (
        "dialect 'myplugin' is defined twice, by 'clashplugin' (package clashplugin 1.0, "
        "clashplugin:UNIVERSE) and by 'myplugin' (package myplugin 0.1.0, myplugin:UNIVERSE); "
        "uninstall one of them or rename its dialect"
    )
    # The tool says the same in one line, exit code 1, also for --help.
    for args in (["--help"], ["-p", "scale-relus"]):
        result = opt(site, *args, stdin=DENSE_RELU)
        assert result.returncode == 1
        assert result.stderr == f"tilecraft-opt: error: {info.value}\n"


def test_a_plugin_pass_named_like_tilecraft_s(tmp_path, monkeypatch):
    write_plugin(tmp_path, "clashplugin", PASS_CLASH)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(registry.PluginError, match=r"^pass 'fuse-ops' is defined twice, by 'clashplugin' .* and by 'tilecraft' \(package tilecraft"):
            registry.get_multiverse()
        # Everything that builds a context reports it too.
        with pytest.raises(registry.PluginError):
            parse_text(DENSE_RELU)
    finally:
        _forget_modules("clashplugin")


def test_two_plugins_of_one_entry_point_name(site):
    # Another package declaring its universe as `myplugin` too: neither is dropped.
    write_plugin(site, "otherplugin", PASS_CLASH.replace("fuse-ops", "other-pass"))
    entry_points = site / "otherplugin-1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[xdsl.universe]\nmyplugin = otherplugin:UNIVERSE\n")
    try:
        with pytest.raises(registry.PluginError, match=r"^two plugins have the entry-point name 'myplugin', 'myplugin' \(package (myplugin 0.1.0, myplugin|otherplugin 1.0, otherplugin):UNIVERSE\) and 'myplugin' \(package"):
            registry.providers()
    finally:
        _forget_modules("otherplugin")


def test_a_plugin_that_does_not_load(tmp_path, monkeypatch):
    write_plugin(tmp_path, "brokenplugin", "import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(registry.PluginError, match=r"^plugin 'brokenplugin' \(package brokenplugin 1.0, brokenplugin:UNIVERSE\) failed to load: ModuleNotFoundError"):
            registry.providers()
        result = opt(tmp_path, "--help")
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("tilecraft-opt: error: plugin 'brokenplugin'")
    finally:
        _forget_modules("brokenplugin")


def test_a_universe_that_is_not_one(tmp_path, monkeypatch):
    write_plugin(tmp_path, "oddplugin", "UNIVERSE = {'dialects': []}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(registry.PluginError, match="is not an xdsl.universe.Universe but a dict"):
            registry.providers()
    finally:
        _forget_modules("oddplugin")


# -- strategies -------------------------------------------------------------------------


@irdl_op_definition
class HalveOp(graph.GraphOp):
    """A graph-level op of a dialect of the test's own, `x / 2`."""

    name = "halving.halve"
    input = operand_def()
    traits = traits_def(graph.Injective())

    def infer(self, types):
        return [graph.ranked(types[0])]


def halve_module() -> ModuleOp:
    """DENSE_RELU with its relu replaced by halving.halve."""
    module = parse_text(DENSE_RELU)
    relu = next(op for op in module.walk() if isinstance(op, graph.ReluOp))
    Rewriter.replace_op(relu, HalveOp([relu.inputs[0]], result_types=[relu.outputs[0].type]))
    return module


def halve(op, inputs, constants):
    (x,) = inputs
    return te.compute(x.shape, lambda *i: x[i] * 0.5, name="halve")


def test_an_op_without_a_strategy_is_named(strategies):
    with pytest.raises(OpError, match=r"convert-graph-to-te: no te lowering for 'halving.halve'"):
        convert_graph_to_te(halve_module())


def test_a_registered_strategy_lowers_the_op(strategies):
    tc.register_strategy(HalveOp, halve)
    module = halve_module()
    convert_graph_to_te(module)
    # Unfused, the op got a group and a kernel of its own.
    names = [f.sym_name.data for f in module.body.block.ops]
    assert names == ["main", "dense_0", "halving.halve_1"]
    assert 'te.compute "halve"' in str(module.body.block.last_op)
    x, w = RNG.standard_normal((4, 16), np.float32), RNG.standard_normal((8, 16), np.float32)
    np.testing.assert_allclose(tc.compile(halve_module())(x, w), 0.5 * (x @ w.T), rtol=1e-5, atol=1e-5)


def test_a_strategy_with_a_schedule_makes_an_anchor(strategies):
    calls = []

    def schedule(s, out, anchor, between):
        calls.append((out.name, anchor.name, [t.name for t in between]))
        s[out].parallel(out.op.axis[0])

    @tc.register_strategy("halving.halve", schedule=schedule)
    def compute(op, inputs, constants):
        return halve(op, inputs, constants)

    assert strategy.COMPUTES["halving.halve"] is compute  # the decorator returns the function
    module = parse_text(DENSE_RELU.replace("graph.dense %x, %w", "graph.add %x, %x").replace("8x16", "4x16").replace("4x8", "4x16"))
    relu = next(op for op in module.walk() if isinstance(op, graph.ReluOp))
    Rewriter.replace_op(relu, HalveOp([relu.inputs[0]], result_types=[relu.outputs[0].type]))
    convert_graph_to_te(module)
    assert calls == [("halve", "halve", [])]
    assert "sched.parallel" in str(module)


def test_register_strategy_errors(strategies):
    with pytest.raises(ValueError, match=r"'graph.relu' already has a te strategy \(pass replace=True\)"):
        tc.register_strategy("graph.relu", halve)
    tc.register_strategy("graph.relu", halve, replace=True)
    assert strategy.COMPUTES["graph.relu"] is halve
    with pytest.raises(TypeError, match="is not a graph.GraphOp"):
        tc.register_strategy(graph.ConstantOp, halve)
    with pytest.raises(ValueError, match="expected an op name 'dialect.op', got 'halve'"):
        tc.register_strategy("halve", halve)
    with pytest.raises(TypeError, match="must be callable"):
        tc.register_strategy("halving.halve", "halve")


@pytest.mark.parametrize("result", [None, [], ["x"], "two"])
def test_a_strategy_that_returns_no_tensors(strategies, result):
    def bad(op, inputs, constants):
        if result == "two":
            return [halve(op, inputs, constants), halve(op, inputs, constants)]
        return result

    tc.register_strategy(HalveOp, bad)
    with pytest.raises(OpError, match=r"convert-graph-to-te: cannot lower 'halving.halve': its te strategy"):
        convert_graph_to_te(halve_module())


# -- through tc.compile ----------------------------------------------------------------


def test_compile_with_the_plugin_pass_matches_numpy(site):
    model = tc.compile(parse_text(DENSE_RELU), extra_passes={"before:fuse-ops": [scale_relus(0.5)]})
    assert model.passes.index("scale-relus") == model.passes.index("fuse-ops") - 1
    x, w = RNG.standard_normal((4, 16), np.float32), RNG.standard_normal((8, 16), np.float32)
    np.testing.assert_allclose(model(x, w), 0.5 * np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-5)


def test_the_plugin_op_fuses_by_its_trait(site):
    # Injective: both scaled relus join the conv's group, like the relus they replace.
    model = tc.compile(parse_text(CONV_RELU_ADD), extra_passes={"after:fold-constants": [scale_relus(2.0)]})
    assert "fused_conv2d_myplugin.scaled_relu_add_myplugin.scaled_relu" in model.kernel_calls
    assert not any("scaled_relu" in k and "conv2d" not in k for k in model.kernel_calls)


@pytest.mark.parametrize("fuse", [True, False])
def test_compile_conv_block_with_the_plugin(site, fuse):
    x = RNG.standard_normal((1, 3, 8, 8), np.float32)
    w = RNG.standard_normal((4, 3, 3, 3), np.float32)
    r = RNG.standard_normal((1, 4, 8, 8), np.float32)
    # From the start of the pipeline: the plugin op meets infer-shapes,
    # canonicalize, alter-layout and fold-constants too.
    extra = {"before:infer-shapes": [scale_relus(3.0)]}
    model = tc.compile(parse_text(CONV_RELU_ADD), fuse=fuse, extra_passes=extra)
    expected = 3.0 * np.maximum(3.0 * np.maximum(_conv_nchw(x, w), 0) + r, 0)
    np.testing.assert_allclose(model(x, w, r), expected, rtol=1e-4, atol=1e-4)


def _conv_nchw(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """3x3 convolution, stride 1, padding 1 (numpy)."""
    n, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd), np.float32)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i : i + h, j : j + wd], w[:, :, i, j])
    return out
