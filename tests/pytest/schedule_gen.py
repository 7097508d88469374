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


# --- random multi-stage te programs with random schedules (te Python API) ------------


def _wrap_index(rng: random.Random, x, n: int):
    """A random index of x that may go negative before `%` brings it into [0, n):
    `((a*x + b) // d) % n`, floor semantics throughout."""
    a = rng.choice([-2, -1, 1, 2, 3])
    b = rng.randint(-7, 7)
    d = rng.choice([1, 1, 2, 3])
    return ((x * a + b) // d) % n


def pipeline(rng: random.Random, m: int, n: int):
    """Placeholder A (m, n) -> B (elementwise, offset/negative `//`/`%` indices or
    padding through if_then_else) -> C (a windowed sum over a wrapped index of B)
    -> D (a wrapped read of C). Each stage is read only by the next one (and all
    read A), so every stage can be computed at any loop of its reader."""
    from tilecraft import te

    A = te.placeholder((m, n), "float32", name="A")
    if rng.random() < 0.5:
        p = rng.randint(-3, 3)
        B = te.compute(
            (m, n),
            lambda i, j: te.if_then_else((j - p >= 0) & (j - p < n), A[i, j - p], -1.0)
            + A[_wrap_index(rng, i, m), j],
            name="B",
        )
    else:
        B = te.compute(
            (m, n), lambda i, j: A[_wrap_index(rng, i, m), _wrap_index(rng, j, n)] * 2.0 + A[i, j], name="B"
        )
    window, shift = rng.randint(1, 4), rng.randint(0, 5)
    r = te.reduce_axis((0, window), name="r")
    C = te.compute((m, n), lambda i, j: te.sum(B[i, (j + r - shift) % n], axis=r), name="C")
    c = rng.randint(-4, 4)
    D = te.compute((m, n), lambda i, j: C[(i - c) % m, _wrap_index(rng, j, n)] * 0.5, name="D")
    return A, B, C, D


class _Loops:
    """The leaf axes of one te stage as the generator knows them, with which of
    them hold a compute_at (they follow splits to the outer part and fuses)."""

    def __init__(self, rng: random.Random, stage, axes):
        self.rng, self.stage, self.leaves = rng, stage, list(axes)
        self.attach_points: set[int] = set()
        self.annotated: set[int] = set()

    def split(self):
        v = self.rng.choice(self.leaves)
        if id(v) in self.annotated:
            return
        if self.rng.random() < 0.7:
            outer, inner = self.stage.split(v, factor=self.rng.randint(1, max(1, min(v.extent + 2, 9))))
        else:
            outer, inner = self.stage.split(v, nparts=self.rng.randint(1, max(1, min(v.extent + 1, 5))))
        pos = next(k for k, x in enumerate(self.leaves) if x is v)
        self.leaves[pos : pos + 1] = [outer, inner]
        if id(v) in self.attach_points:
            self.attach_points.add(id(outer))

    def fuse(self):
        pairs = [
            k for k in range(len(self.leaves) - 1)
            if self.leaves[k].kind == self.leaves[k + 1].kind
            and not {id(self.leaves[k]), id(self.leaves[k + 1])} & self.annotated
        ]  # fmt: skip
        if not pairs:
            return
        k = self.rng.choice(pairs)
        a, b = self.leaves[k], self.leaves[k + 1]
        fused = self.stage.fuse(a, b)
        self.leaves[k : k + 2] = [fused]
        if {id(a), id(b)} & self.attach_points:
            self.attach_points.add(id(fused))

    def reorder(self):
        order = list(self.leaves)
        self.rng.shuffle(order)
        self.stage.reorder(*order)
        self.leaves = order

    def shuffle_loops(self, steps: int):
        for _ in range(steps):
            self.rng.choice([self.split, self.split, self.fuse, self.reorder])()

    def annotate(self, parallel: bool):
        last = self.leaves[-1]
        if last.kind == "spatial" and id(last) not in self.attach_points and self.rng.random() < 0.5:
            self.stage.vectorize(last)
            self.annotated.add(id(last))
        spatial = [v for v in self.leaves if v.kind == "spatial" and id(v) not in self.annotated]
        if parallel and spatial and self.rng.random() < 0.4:
            v = self.rng.choice(spatial)
            self.stage.parallel(v)
            self.annotated.add(id(v))
        small = [v for v in self.leaves if v.extent <= 8 and id(v) not in self.annotated]
        if small and self.rng.random() < 0.3:
            v = self.rng.choice(small)
            self.stage.unroll(v)
            self.annotated.add(id(v))


def random_pipeline_schedule(rng: random.Random, A, B, C, D):
    """A random legal schedule of `pipeline`'s stages: loops of each stage split,
    fused and reordered; B inlined, at the root or computed at a loop of C; C at the
    root or computed at a loop of D, optionally through a cache_write; and loops
    split and fused again *after* something was computed at them."""
    from tilecraft import te

    s = te.create_schedule(D)
    d = _Loops(rng, s[D], D.op.axis)
    d.shuffle_loops(rng.randint(0, 2))
    c_mode = rng.choice(["root", "at", "at", "cache"])
    if c_mode == "cache":
        CL = s.cache_write(C, "local")
        cl = _Loops(rng, s[CL], (*s[CL].op.axis, *s[CL].op.reduce_axis))
        c = _Loops(rng, s[C], s[C].op.axis)
        c.shuffle_loops(rng.randint(0, 2))
        point = rng.choice(c.leaves)
        s[CL].compute_at(s[C], point)
        c.attach_points.add(id(point))
        c.shuffle_loops(rng.randint(0, 2))
        cl.shuffle_loops(rng.randint(0, 2))
    else:
        c = _Loops(rng, s[C], (*C.op.axis, *C.op.reduce_axis))
        c.shuffle_loops(rng.randint(0, 2))
    if c_mode != "root":
        point = rng.choice(d.leaves)
        s[C].compute_at(s[D], point)
        d.attach_points.add(id(point))
    b_mode = rng.choice(["root", "inline", "at"])
    b = _Loops(rng, s[B], B.op.axis)
    if b_mode == "inline":
        s[B].compute_inline()
    else:
        b.shuffle_loops(rng.randint(0, 2))
        if b_mode == "at":
            # B's reader is C's compute stage: the cache, after a cache_write.
            reader, loops = (CL, cl) if c_mode == "cache" else (C, c)
            point = rng.choice(loops.leaves)
            s[B].compute_at(s[reader], point)
            loops.attach_points.add(id(point))
        b.annotate(parallel=b_mode == "root")
    # Primitives after attachment: the loops holding B and C change shape again.
    c.shuffle_loops(rng.randint(0, 2))
    d.shuffle_loops(rng.randint(0, 2))
    if c_mode == "cache":
        cl.shuffle_loops(rng.randint(0, 1))
        cl.annotate(parallel=False)
    c.annotate(parallel=c_mode == "root")
    d.annotate(parallel=True)
    return s
