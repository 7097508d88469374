"""Bad te programs and calls, as a user would write them (issue 26, section 5).

Each case was once a bare Python error from inside tilecraft, or no error at
all; now it is a message naming the argument, stage or place at fault.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te

# -- a built function called with the wrong number of arrays ---------------------


def add_schedule():
    A = te.placeholder((8,), "float32", name="A")
    B = te.placeholder((8,), "float32", name="B")
    C = te.compute((8,), lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), A, B, C


def test_wrong_count_names_the_arguments():
    s, A, B, C = add_schedule()
    f = tc.build(s, [A, B, C])
    a, b, c = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"^main\(A, B, C\) takes 3 arguments .*, got 2: missing C$"):
        f(a, b)
    f(a, b, c)
    np.testing.assert_array_equal(c, a + 1)


def test_wrong_count_with_outputs_listed_first():
    """The compiled function takes its inputs first; build's args put C first.
    The reordering wrapper indexed past the end (IndexError) or dropped an array."""
    s, A, B, C = add_schedule()
    f = tc.build(s, [C, A, B])
    a, b, c = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"^main\(C, A, B\) takes 3 arguments .*, got 2: missing B$"):
        f(c, a)
    with pytest.raises(TypeError, match=r"^main\(C, A, B\) takes 3 arguments .*, got 4, 1 too many$"):
        f(c, a, b, b)
    f(c, a, b)
    np.testing.assert_array_equal(c, a + 1)


def test_wrong_count_for_a_function_run_in_pieces():
    """A te.scan runs as compiled pieces called from Python: they looked arrays up
    by argument and failed on the missing one."""
    X = te.placeholder((6, 4), name="X")
    state = te.placeholder((6, 4))
    init = te.compute((1, 4), lambda _, i: X[0, i])
    update = te.compute((6, 4), lambda t, i: state[t - 1, i] + X[t, i])
    scan = te.scan(init, update, state, inputs=[X])
    f = tc.build(te.create_schedule(scan.op), [X, scan], name="cumsum")
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    with pytest.raises(TypeError, match=r"^cumsum\(X, .*\) takes 2 arguments .*, got 1: missing "):
        f(x)
    out = np.zeros((6, 4), np.float32)
    f(x, out)
    np.testing.assert_allclose(out, np.cumsum(x, axis=0))


# -- compute_inline of an output stage --------------------------------------------


def chain():
    A = te.placeholder((8,), "float32", name="A")
    B = te.compute((8,), lambda i: A[i] * 2, name="B")
    C = te.compute((8,), lambda i: B[i] + 1, name="C")
    return A, B, C


@pytest.mark.parametrize("outputs", ["C", "B and C"])
def test_an_output_stage_cannot_be_inlined(outputs):
    """TVM refuses it; it was accepted, and the output computed by a copy."""
    A, B, C = chain()
    s = te.create_schedule(C.op if outputs == "C" else [B.op, C.op])
    inlined = C if outputs == "C" else B
    name = inlined.name
    with pytest.raises(ValueError, match=rf"^s\[{name}\]\.compute_inline\(\): '{name}' is an output of the schedule"):
        s[inlined].compute_inline()


def test_an_intermediate_stage_is_still_inlined():
    A, B, C = chain()
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    assert "B" not in [line.split('"')[1] for line in tc.lower(s, [A, C]).splitlines() if "loop.alloc" in line]
    f = tc.build(s, [A, C])
    a, c = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    f(a, c)
    np.testing.assert_array_equal(c, a * 2 + 1)
