"""Users' passes in the model pipeline: `tc.compile(model, extra_passes=...)`.

A point names a pass of the pipeline and a side, `"after:fuse-ops"` or
`"before:plan-memory"`; the passes given for it run there, in the order given:

```python
tc.compile(model, extra_passes={"after:fuse-ops": [MyPass(alpha=2.0)]})
```

`insert_passes` is a pure function on a list of pass names or pass instances, so
any pipeline (the stages of compile-model) can take it. When a
pass runs more than once, `before:` means before its first run and `after:` after
its last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from xdsl.passes import ModulePass

SIDES = ("before", "after")

Item = TypeVar("Item", str, ModulePass)

ExtraPasses = Mapping[str, ModulePass | Sequence[ModulePass]]


def pass_name(item: str | ModulePass) -> str:
    """The pipeline name of a pass given by name or as an instance."""
    return item if isinstance(item, str) else item.name


def known_points(pipeline: Sequence[str | ModulePass]) -> list[str]:
    """Every point of `pipeline`, in pipeline order."""
    names = list(dict.fromkeys(pass_name(item) for item in pipeline))
    return [f"{side}:{name}" for name in names for side in SIDES]


def insert_passes(
    pipeline: Sequence[Item], extra: ExtraPasses | None
) -> list[Item | ModulePass]:
    """`pipeline` (pass names or instances) with the passes of `extra` inserted at
    their points; raises ValueError for an unknown point and TypeError for
    something that is not a pass instance."""
    pipeline = list(pipeline)
    if not extra:
        return pipeline
    names = [pass_name(item) for item in pipeline]
    before: dict[int, list[ModulePass]] = {}
    after: dict[int, list[ModulePass]] = {}
    for point, passes in extra.items():
        side, _, target = point.partition(":") if isinstance(point, str) else ("", "", "")
        if side not in SIDES or target not in names:
            raise ValueError(
                f"extra_passes: unknown point {point!r}; the pipeline's points are "
                + ", ".join(known_points(pipeline))
            )
        one = isinstance(passes, (ModulePass, str)) or not isinstance(passes, Sequence)
        given: list[object] = [passes] if one else list(passes)  # type: ignore[arg-type]
        checked: list[ModulePass] = []
        for p in given:
            if not isinstance(p, ModulePass):
                hint = " (instantiate it)" if isinstance(p, type) and issubclass(p, ModulePass) else ""
                raise TypeError(
                    f"extra_passes[{point!r}]: expected ModulePass instances, got {p!r}{hint}"
                )
            checked.append(p)
        if side == "before":
            before.setdefault(names.index(target), []).extend(checked)
        else:
            last = len(names) - 1 - names[::-1].index(target)
            after.setdefault(last, []).extend(checked)
    result: list[Item | ModulePass] = []
    for n, item in enumerate(pipeline):
        result += before.get(n, [])
        result.append(item)
        result += after.get(n, [])
    return result
