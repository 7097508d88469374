"""`fewer_collections` (utils/gc_pause.py): raised collector thresholds while
compiling, the caller's put back after the outermost compile, even on error."""

import gc

import pytest

from tilecraft.utils.gc_pause import COMPILE_THRESHOLDS, compiling, fewer_collections


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(1234, 5, 6)
    yield (1234, 5, 6)
    gc.set_threshold(*saved)


def test_raised_inside_and_restored_after(thresholds):
    with fewer_collections():
        assert gc.get_threshold() == COMPILE_THRESHOLDS
        with fewer_collections():
            assert gc.get_threshold() == COMPILE_THRESHOLDS
        assert gc.get_threshold() == COMPILE_THRESHOLDS  # the outer compile still runs
    assert gc.get_threshold() == thresholds


def test_restored_when_the_compile_raises(thresholds):
    @compiling
    def failing():
        assert gc.get_threshold() == COMPILE_THRESHOLDS
        raise ValueError("bad schedule")

    with pytest.raises(ValueError, match="bad schedule"):
        failing()
    assert gc.get_threshold() == thresholds


def test_a_compile_restores_the_thresholds(thresholds):
    import numpy as np

    import tilecraft as tc
    from tilecraft import te

    a = te.placeholder((8,), "float32", name="a")
    b = te.compute((8,), lambda i: a[i] + 1.0, name="b")
    f = tc.build(te.create_schedule(b.op), [a, b])
    x = np.arange(8, dtype="float32")
    y = np.zeros(8, "float32")
    f(x, y)
    np.testing.assert_allclose(y, x + 1)
    assert gc.get_threshold() == thresholds
