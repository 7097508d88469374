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


# -- a truncated te file ------------------------------------------------------------

TE_FILE = """\
func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<8xf32>
}
"""


def parse_error(text: str) -> str:
    from xdsl.utils.exceptions import ParseError

    from tilecraft.driver.context import parse_text

    with pytest.raises(ParseError) as raised:
        parse_text(text, "cut.mlir")
    # The tools print it as `file:line:col: error: message` (str() is xDSL's layout).
    return f"{str(raised.value).splitlines()[0]}: error: {raised.value.msg}"


@pytest.mark.parametrize(
    "cut, message",
    [
        # inside the te.compute's body: two regions open
        (TE_FILE.index("    te.yield"),
         "cut.mlir:4:1: error: the file ends inside 'te.compute' (its region opens at 2:50), "
         "inside 'func.func' (its region opens at 1:50): 2 '}' are missing (is the file truncated?)"),
        # inside an op: what the op's parser expected, then where the file ends
        (TE_FILE.index("-> tensor<8xf32> {\n    %a"),
         "cut.mlir:2:33: error: Expected '->': the file ends inside 'func.func' (its region opens at 1:50): "
         "a '}' is missing (is the file truncated?)"),
        # before any region opens
        (TE_FILE.index(") -> tensor<8xf32> {"),
         "cut.mlir:1:31: error: the file ends early: ')' expected (is the file truncated?)"),
    ],
    ids=["in-a-body", "in-an-op", "in-the-signature"],
)
def test_a_truncated_file_says_where_it_ends_and_what_is_open(cut, message):
    assert parse_error(TE_FILE[:cut]) == message


def test_a_stray_token_in_a_region_names_the_region():
    text = TE_FILE.replace("    te.yield", "    42\n    te.yield")
    assert parse_error(text) == (
        "cut.mlir:4:5: error: expected an operation or the '}' that closes the region of "
        "'te.compute' (opened at 2:50), got '42'"
    )


def test_a_whole_file_still_parses():
    from tilecraft.driver.context import parse_text

    parse_text(TE_FILE, "whole.mlir")
