"""Weight stores belong to their module: no process-wide registry, the caller's
store is never written, printed IR finds its store again in another process."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import numpy as np
import pytest

import tilecraft as tc
from tilecraft.driver.context import parse_text
from tilecraft.utils.weights import ATTR, WeightError, WeightStore, attach, store_of

MODEL = """
func.func @main(%x: tensor<2x8xf32> {tc.name = "x"}) -> tensor<2x4xf32> {
  %w = graph.weight "fc.weight" : tensor<4x8xf32>
  %y = graph.dense %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
"""


def test_compile_leaves_the_callers_store_as_it_was():
    weight = np.arange(32, dtype=np.float32).reshape(4, 8)
    store = WeightStore({"fc.weight": weight})
    module = parse_text(MODEL)
    compiled = tc.compile(module, store=store)
    # alter-layout packed the weight (KN): into the model's own store, not the caller's.
    assert list(store.arrays) == ["fc.weight"] and not store.changed
    np.testing.assert_array_equal(store["fc.weight"], np.arange(32, dtype=np.float32).reshape(4, 8))
    assert "graph.weight" in str(module)  # the caller's module is not rewritten either
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(compiled(x), x @ weight.T, rtol=1e-6)


def test_a_store_lives_as_long_as_its_module():
    module = parse_text(MODEL)
    store = WeightStore({"fc.weight": np.zeros((4, 8), np.float32)})
    attach(module, store)
    assert store_of(module) is store
    assert ATTR not in module.attributes  # held in memory: the text names no file
    ref = weakref.ref(store)
    del module, store
    gc.collect()
    assert ref() is None


def test_a_child_reads_its_parent_and_keeps_its_additions():
    parent = WeightStore({"a": np.ones(2, np.float32)})
    child = parent.child()
    name = child.add(np.zeros(3, np.float32), "a")
    assert name == "a_1" and "a" in child and name not in parent
    np.testing.assert_array_equal(child["a"], parent["a"])


def test_printed_ir_reparses_in_a_fresh_process(tmp_path):
    module = parse_text(MODEL)
    attach(module, WeightStore({"fc.weight": np.full((4, 8), 0.5, np.float32)}), tmp_path / "w.npz")
    (tmp_path / "m.mlir").write_text(str(module))
    script = (
        "import numpy as np, tilecraft as tc\n"
        f"m = tc.compile({str(tmp_path / 'm.mlir')!r})\n"
        "print(float(m(np.ones((2, 8), np.float32)).sum()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(2 * 4 * 8 * 0.5)


def test_a_store_attribute_that_is_not_a_path_is_an_error():
    from xdsl.dialects.builtin import IntegerAttr, i64

    module = parse_text(MODEL)
    module.attributes[ATTR] = IntegerAttr(3, i64)
    with pytest.raises(WeightError, match="must name a .npz file"):
        store_of(module)
