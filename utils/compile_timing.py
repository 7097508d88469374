"""Where a compilation spends its time: a tree of timed sections, printed as
MLIR's `-mlir-timing` prints its report.

```python
with collect_timing() as timer:      # tc.compile(..., timing=True) does this
    with section("compile-model"):
        with section("fuse-ops"):
            ...
print(timer.report(), file=sys.stderr)
```

Code deep in the compiler marks its steps with `section(name)`, which costs a
context-variable read and nothing else when no timer collects (the common case),
so the steps need no timer passed down. Sections of one name under one parent
are added up (a pass run once per kernel is one line, with its count), as in
MLIR's list view; the tree keeps the order in which sections first ran.

Work done in other threads or processes (kernels compiled in parallel) is
reported by the caller with `record(name, seconds)`, one line per kind of work:
its seconds may then add up to more than the wall time of its parent.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class TimingNode:
    """One named section: its seconds over `count` runs, and its sub-sections."""

    name: str
    seconds: float = 0.0
    count: int = 0
    children: dict[str, TimingNode] = field(default_factory=dict)

    def child(self, name: str) -> TimingNode:
        node = self.children.get(name)
        if node is None:
            node = self.children[name] = TimingNode(name)
        return node

    def find(self, *path: str) -> TimingNode | None:
        """The node under this one at `path` (names), or None."""
        node: TimingNode | None = self
        for name in path:
            node = node.children.get(name) if node is not None else None
        return node

    def as_dict(self) -> dict:
        """{"seconds", "count", "children": {name: ...}} (JSON-ready)."""
        return {
            "seconds": self.seconds,
            "count": self.count,
            "children": {n: c.as_dict() for n, c in self.children.items()},
        }


class Timer:
    """Collects sections while it is the current timer (`collect_timing`)."""

    def __init__(self):
        self.root = TimingNode("Total", count=1)
        self._stack = [self.root]
        self._start = time.perf_counter()

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[TimingNode]:
        node = self._stack[-1].child(name)
        self._stack.append(node)
        start = time.perf_counter()
        try:
            yield node
        finally:
            node.seconds += time.perf_counter() - start
            node.count += 1
            self._stack.pop()

    def record(self, name: str, seconds: float, count: int = 1) -> None:
        """Add `seconds` of work measured elsewhere (another thread or process)
        under the open section."""
        node = self._stack[-1].child(name)
        node.seconds += seconds
        node.count += count

    @contextlib.contextmanager
    def nested(self, name: str) -> Iterator[TimingNode]:
        """Open the section `name` without timing it (to `record` under it)."""
        node = self._stack[-1].child(name)
        self._stack.append(node)
        try:
            yield node
        finally:
            self._stack.pop()

    def stop(self) -> None:
        self.root.seconds = time.perf_counter() - self._start

    def report(self, title: str = "Execution time report") -> str:
        """The tree as text: wall seconds, share of the total, name (indented by
        depth; `(xN)` when a section ran N times)."""
        if not self.root.seconds:
            self.stop()
        total = self.root.seconds or 1e-12
        rule = "===" + "-" * 73 + "==="
        lines = [rule, f"{'... ' + title + ' ...':^79}".rstrip(), rule]
        lines.append(f"  Total Execution Time: {self.root.seconds:.4f} seconds")
        lines.append("")
        lines.append("  ----Wall Time----  ----Name----")

        def visit(node: TimingNode, depth: int) -> None:
            for child in node.children.values():
                runs = f" (x{child.count})" if child.count > 1 else ""
                share = 100.0 * child.seconds / total
                lines.append(f"  {child.seconds:8.4f} ({share:5.1f}%)  {'  ' * depth}{child.name}{runs}")
                visit(child, depth + 1)

        visit(self.root, 0)
        lines.append(f"  {self.root.seconds:8.4f} (100.0%)  Total")
        return "\n".join(lines)


_CURRENT: contextvars.ContextVar[Timer | None] = contextvars.ContextVar("tilecraft_timer", default=None)


def current_timer() -> Timer | None:
    return _CURRENT.get()


@contextlib.contextmanager
def collect_timing(timer: Timer | None = None) -> Iterator[Timer]:
    """Make `timer` (a new one by default) the current timer inside the block."""
    timer = timer if timer is not None else Timer()
    token = _CURRENT.set(timer)
    try:
        yield timer
    finally:
        _CURRENT.reset(token)
        timer.stop()


@contextlib.contextmanager
def section(name: str) -> Iterator[None]:
    """Time the block as `name` under the open section of the current timer (if any)."""
    timer = _CURRENT.get()
    if timer is None:
        yield
        return
    with timer.section(name):
        yield


def record(name: str, seconds: float, count: int = 1) -> None:
    """`Timer.record` on the current timer, if any."""
    timer = _CURRENT.get()
    if timer is not None:
        timer.record(name, seconds, count)



def pass_label(p) -> str:
    """A pass as `-p` spells it: its name, and its number and flag options not at
    their defaults (`loop-unroll{trivial-only=true}`), so that two runs of one
    pass with different options are two lines of a report (text options, file
    paths mostly, are left out)."""
    import dataclasses

    options = []
    for f in dataclasses.fields(p):
        value = getattr(p, f.name)
        if isinstance(value, bool | int) and value != f.default:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            options.append(f"{f.name.replace('_', '-')}={text}")
    return f"{p.name}{{{' '.join(options)}}}" if options else p.name
