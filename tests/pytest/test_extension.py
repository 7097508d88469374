"""`insert_passes`: users' passes at named points of a pipeline (pipelines/extra_passes.py)."""

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilecraft.pipelines.extra_passes import insert_passes, known_points

PIPELINE = ["infer-shapes", "fuse-ops", "plan-memory", "convert-graph-to-te"]


@dataclass(frozen=True)
class Mark(ModulePass):
    """A pass that only says where it ran (`tag`)."""

    name = "mark"
    tag: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def tags(items) -> list[str]:
    return [item if isinstance(item, str) else f"mark:{item.tag}" for item in items]


def test_no_extra_passes_is_the_pipeline():
    assert insert_passes(PIPELINE, None) == PIPELINE
    assert insert_passes(PIPELINE, {}) == PIPELINE


def test_before_and_after_in_the_order_given():
    extra = {
        "after:fuse-ops": [Mark(tag="a1"), Mark(tag="a2")],
        "before:plan-memory": Mark(tag="b"),  # one pass needs no list
        "before:infer-shapes": [Mark(tag="first")],
        "after:convert-graph-to-te": (Mark(tag="last"),),
    }
    assert tags(insert_passes(PIPELINE, extra)) == [
        "mark:first",
        "infer-shapes",
        "fuse-ops",
        "mark:a1",
        "mark:a2",
        "mark:b",
        "plan-memory",
        "convert-graph-to-te",
        "mark:last",
    ]


def test_pass_instances_name_points_too():
    pipeline = [Mark(tag="x"), "fuse-ops"]
    result = insert_passes(pipeline, {"after:mark": [Mark(tag="y")]})
    assert tags(result) == ["mark:x", "mark:y", "fuse-ops"]


def test_a_pass_that_runs_twice():
    # before: its first run, after: its last.
    pipeline = ["cse", "fuse-ops", "cse"]
    result = insert_passes(pipeline, {"before:cse": [Mark(tag="b")], "after:cse": [Mark(tag="a")]})
    assert tags(result) == ["mark:b", "cse", "fuse-ops", "cse", "mark:a"]


def test_the_input_is_not_changed():
    pipeline = list(PIPELINE)
    insert_passes(pipeline, {"after:fuse-ops": [Mark()]})
    assert pipeline == PIPELINE


@pytest.mark.parametrize("point", ["after:fuse", "fuse-ops", "during:fuse-ops", "after:", ":fuse-ops"])
def test_unknown_point_names_the_known_ones(point):
    with pytest.raises(ValueError) as info:
        insert_passes(PIPELINE, {point: [Mark()]})
    message = str(info.value)
    assert f"unknown point {point!r}" in message
    assert ", ".join(known_points(PIPELINE)) in message
    assert "before:infer-shapes, after:infer-shapes, before:fuse-ops" in message


@pytest.mark.parametrize("bad", ["mark", Mark, [Mark(), 3]])
def test_not_a_pass_instance(bad):
    with pytest.raises(TypeError, match=r"extra_passes\['after:fuse-ops'\]: expected ModulePass instances"):
        insert_passes(PIPELINE, {"after:fuse-ops": bad})


def test_a_pass_class_gets_a_hint():
    with pytest.raises(TypeError, match=r"\(instantiate it\)"):
        insert_passes(PIPELINE, {"after:fuse-ops": [Mark]})
