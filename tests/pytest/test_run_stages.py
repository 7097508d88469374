"""`run_stages` (pipelines/run_stages.py): passes applied in order, the module
verified after the last, or after each with TILECRAFT_VERIFY_EACH=1."""

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.passes import ModulePass

from tilecraft.pipelines.run_stages import run_stages, verify_each_default
from tilecraft.utils.diagnostics import OpError


@dataclass(frozen=True)
class Append(ModulePass):
    """Records that it ran; `break_ir` adds a function that returns nothing for an i32."""

    name = "append"
    log: list
    tag: str = ""
    break_ir: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.log.append(self.tag)
        if self.break_ir:
            body = func.FuncOp("broken", ((), (i32,)))
            body.body.block.add_op(arith.ConstantOp(IntegerAttr(1, i32)))
            body.body.block.add_op(func.ReturnOp())
            op.body.block.add_op(body)


@dataclass(frozen=True)
class Repair(ModulePass):
    """Removes what `Append(break_ir=True)` added."""

    name = "repair"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.ops):
            f.detach()
            f.erase()


def test_passes_run_in_order():
    log: list = []
    run_stages([Append(log, "a"), Append(log, "b")], Context(), ModuleOp([]), verify_each=False)
    assert log == ["a", "b"]


def test_broken_ir_is_found_after_the_last_pass_and_names_the_passes():
    log: list = []
    with pytest.raises(OpError, match=r"after passes append, append \(TILECRAFT_VERIFY_EACH=1"):
        run_stages([Append(log, "a", True), Append(log, "b")], Context(), ModuleOp([]), verify_each=False)
    assert log == ["a", "b"]


def test_verify_each_names_the_pass_that_broke_the_ir():
    log: list = []
    with pytest.raises(OpError, match=r"\[after pass 'append'\]"):
        run_stages([Append(log, "a", True), Append(log, "b")], Context(), ModuleOp([]), verify_each=True)
    assert log == ["a"]  # stopped at once


def test_ir_broken_in_between_is_seen_only_when_verifying_each():
    log: list = []
    stages = [Append(log, "a", True), Repair()]
    run_stages(stages, Context(), ModuleOp([]), verify_each=False)
    with pytest.raises(OpError, match="after pass 'append'"):
        run_stages(stages, Context(), ModuleOp([]), verify_each=True)


def test_the_environment_turns_verify_each_on(monkeypatch):
    monkeypatch.delenv("TILECRAFT_VERIFY_EACH", raising=False)
    assert not verify_each_default()
    monkeypatch.setenv("TILECRAFT_VERIFY_EACH", "1")
    assert verify_each_default()
    log: list = []
    with pytest.raises(OpError, match="after pass 'append'"):
        run_stages([Append(log, "a", True), Append(log, "b")], Context(), ModuleOp([]))
    monkeypatch.setenv("TILECRAFT_VERIFY_EACH", "0")
    assert not verify_each_default()


@dataclass(frozen=True)
class BuildsAnUnfitOp(ModulePass):
    """Builds a graph op whose shape rule refuses its operand (a squeeze of an
    axis of extent 4), as a pass meeting an input it did not expect would."""

    name = "builds-unfit"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.dialects.builtin import TensorType, f32

        from tilecraft.dialects import graph

        body = func.FuncOp("f", ((TensorType(f32, [4]),), ()))
        body.body.block.add_op(graph.SqueezeOp([body.args[0]], {"axes": [0]}))
        body.body.block.add_op(func.ReturnOp())
        op.body.block.add_op(body)


def test_a_shape_error_in_a_pass_is_reported_with_the_pass():
    with pytest.raises(OpError, match=r"error: builds-unfit: cannot squeeze axis 0 of extent 4"):
        run_stages([BuildsAnUnfitOp()], Context(), ModuleOp([]))
