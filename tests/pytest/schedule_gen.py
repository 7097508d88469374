"""Random valid schedules for a te stage, written as `sched` IR text (for property tests).

The generator mirrors the schedule rules: it tracks each stage's leaf axes and
their extents, so every primitive it emits is legal (vectorize only the innermost
spatial leaf, parallel only spatial leaves, fuse only adjacent axes of one kind,
unroll only small extents).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Axis:
    ssa: str
    extent: int
    kind: str  # "spatial" | "reduce"


@dataclass
class StageGen:
    ssa: str
    leaves: list[Axis] = field(default_factory=list)


class ScheduleWriter:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self._n = 0

    def fresh(self, base: str) -> str:
        self._n += 1
        return f"%{base}{self._n}"

    def stage(self, tensor: str, tensor_type: str) -> StageGen:
        s = StageGen(self.fresh("s"))
        self.lines.append(f"{s.ssa} = sched.stage {tensor} : {tensor_type}")
        return s

    def axes(self, stage: StageGen, names_extents_kinds: list[tuple[str, int, str]]):
        for name, extent, kind in names_extents_kinds:
            a = Axis(self.fresh(name), extent, kind)
            self.lines.append(f'{a.ssa} = sched.axis {stage.ssa} "{name}"')
            stage.leaves.append(a)

    def split(self, stage: StageGen, axis: Axis):
        pos = stage.leaves.index(axis)
        outer, inner = self.fresh("o"), self.fresh("n")
        if self.rng.random() < 0.7:
            f = self.rng.randint(1, max(1, min(axis.extent + 2, 16)))
            self.lines.append(f"{outer}, {inner} = sched.split {axis.ssa} by {f}")
            exts = (-(-axis.extent // f), f)
        else:
            p = self.rng.randint(1, max(1, min(axis.extent + 1, 8)))
            self.lines.append(f"{outer}, {inner} = sched.split {axis.ssa} into {p}")
            exts = (p, -(-axis.extent // p))
        stage.leaves[pos : pos + 1] = [Axis(outer, exts[0], axis.kind), Axis(inner, exts[1], axis.kind)]

    def reorder(self, stage: StageGen):
        order = list(stage.leaves)
        self.rng.shuffle(order)
        self.lines.append("sched.reorder " + ", ".join(a.ssa for a in order))
        stage.leaves = order

    def fuse(self, stage: StageGen) -> bool:
        pairs = [
            n for n in range(len(stage.leaves) - 1)
            if stage.leaves[n].kind == stage.leaves[n + 1].kind
        ]
        if not pairs:
            return False
        n = self.rng.choice(pairs)
        a, b = stage.leaves[n], stage.leaves[n + 1]
        f = Axis(self.fresh("f"), a.extent * b.extent, a.kind)
        self.lines.append(f"{f.ssa} = sched.fuse {a.ssa}, {b.ssa}")
        stage.leaves[n : n + 2] = [f]
        return True

    def annotate(self, stage: StageGen, allow_vectorize: bool = True):
        used: set[str] = set()
        last = stage.leaves[-1]
        if allow_vectorize and last.kind == "spatial" and self.rng.random() < 0.6:
            self.lines.append(f"sched.vectorize {last.ssa}")
            used.add(last.ssa)
        spatial = [a for a in stage.leaves if a.kind == "spatial" and a.ssa not in used]
        if spatial and self.rng.random() < 0.5:
            a = self.rng.choice(spatial)
            self.lines.append(f"sched.parallel {a.ssa}")
            used.add(a.ssa)
        small = [a for a in stage.leaves if a.extent <= 8 and a.ssa not in used]
        if small and self.rng.random() < 0.5:
            self.lines.append(f"sched.unroll {self.rng.choice(small).ssa}")

    def random_loops(self, stage: StageGen, allow_vectorize: bool = True):
        for _ in range(self.rng.randint(0, 3)):
            self.split(stage, self.rng.choice(stage.leaves))
        if self.rng.random() < 0.6:
            self.reorder(stage)
        if self.rng.random() < 0.3:
            self.fuse(stage)
        self.annotate(stage, allow_vectorize)

    def text(self) -> str:
        body = "\n".join("    " + line for line in self.lines)
        return "  sched.schedule {\n" + body + "\n  }\n"
