"""`insert-gpu-barriers`: a `gpu.barrier` wherever the threads of a block read
shared memory that other threads wrote, or overwrite what others may still read
(TVM's storage sync).

Runs on the kernels `convert-loop-to-gpu` made. The algorithm scans each block
of ops that every thread of the block runs alike, in order, keeping the shared
buffers written and read since the last barrier:

- an op that reads a buffer written since then (read after write), or writes a
  buffer read since then (write after read), gets a barrier before it, which
  clears both sets;
- a serial loop with uniform bounds (every thread runs the same iterations) is
  scanned inside, from the state before it, so its barriers go between the
  ops of its body; then its body is scanned again from the state at its end:
  a conflict before the body's first barrier is one between an iteration and
  the next (the next tile's load overwriting what the last one computed from),
  so the body ends with a barrier;
- any other op (a guard that some threads take, the inlined thread loops of a
  cooperative load) is one step: barriers cannot go inside it.

A kernel that writes no shared buffer gets no barrier. Tiled GEMM, `ko` the
reduction's outer loop:

```mlir
loop.for %ko = 0 to 8 {
  %As = loop.alloc "A.shared" shared : memref<64x8xf32>
  loop.for %o = 0 to 2 { ... memref.store %a, %As[...] }     // every thread a part
  loop.for %ki = 0 to 8 { ... memref.load %As[...] ... }
}
```
becomes
```mlir
loop.for %ko = 0 to 8 {
  %As = loop.alloc "A.shared" shared : memref<64x8xf32>
  loop.for %o = 0 to 2 { ... memref.store %a, %As[...] }
  gpu.barrier                                                  // the tile is loaded
  loop.for %ki = 0 to 8 { ... memref.load %As[...] ... }
  gpu.barrier                                                  // all have read it
}
```

Rejected, at the op: a `gpu.barrier` (written by hand, or by an earlier run)
inside a branch or loop that only some threads of the block take — those
threads would wait for the others forever — and a read after a write (or a
write after a read) of a shared buffer inside such a branch, where no barrier
can go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilecraft.analysis.shared_memory import Uniformity, accesses
from tilecraft.dialects.loop import ForOp, GuardOp, LoopKind, YieldOp
from tilecraft.utils.diagnostics import OpError

PASS = "insert-gpu-barriers"


@dataclass
class _Pending:
    """Shared buffers written and read since the last barrier."""

    written: set[SSAValue] = field(default_factory=set)
    read: set[SSAValue] = field(default_factory=set)

    def copy(self) -> _Pending:
        return _Pending(set(self.written), set(self.read))

    def conflicts(self, writes: set[SSAValue], reads: set[SSAValue]) -> bool:
        return bool(reads & self.written or writes & self.read)


def _name(value: SSAValue) -> str:
    owner = value.owner
    return f"'{owner.buffer_name.data}'" if hasattr(owner, "buffer_name") else "a shared buffer"  # type: ignore[union-attr]


@dataclass
class _Placer:
    uniformity: Uniformity = field(default_factory=Uniformity)

    def uniform_loop(self, op: Operation) -> bool:
        return (
            isinstance(op, ForOp)
            and op.kind.data in (LoopKind.SERIAL, LoopKind.UNROLLED)
            and all(self.uniformity.uniform(v) for v in op.operands)
        )

    def uniform_guard(self, op: Operation) -> bool:
        return isinstance(op, GuardOp) and self.uniformity.uniform(op.cond)

    def scan(self, block: Block, state: _Pending, insert: bool = True) -> tuple[_Pending, bool]:
        """Scan `block` from `state`: the state at its end, and (without
        `insert`, which places barriers) whether a conflict comes before the
        first barrier."""
        for op in list(block.ops):
            if isinstance(op, gpu.BarrierOp):
                if not insert:
                    return state, False
                state = _Pending()
                continue
            writes, reads = accesses(op)
            if state.conflicts(writes, reads):
                if not insert:
                    return state, True
                # (before the outermost op that conflicts: not once per iteration of its loops)
                block.insert_op_before(gpu.BarrierOp(), op)
                state = _Pending()
            if insert and (self.uniform_loop(op) or self.uniform_guard(op)):
                state = self._region(op, state)
                continue
            if insert and op.regions and not (self.uniform_loop(op) or self.uniform_guard(op)):
                self._check_inside(op, writes, reads)
            state = _Pending(state.written | writes, state.read | reads)
        return state, False

    def _region(self, op: Operation, before: _Pending) -> _Pending:
        body = op.regions[0].block
        end, _ = self.scan(body, before.copy())
        if isinstance(op, ForOp):
            _, carried = self.scan(body, end.copy(), insert=False)
            if carried:
                terminator = body.last_op
                assert isinstance(terminator, YieldOp)
                body.insert_op_before(gpu.BarrierOp(), terminator)
                end = _Pending()
            if op.is_static and op.extent > 0:
                return end
        # (the body may not run: what was pending before may still be)
        return _Pending(before.written | end.written, before.read | end.read)

    def _check_inside(self, op: Operation, writes: set[SSAValue], reads: set[SSAValue]) -> None:
        """`op` runs on some threads only: no barrier inside, and none needed."""
        for inner in op.walk():
            if isinstance(inner, gpu.BarrierOp):
                raise OpError(inner, f"{PASS}: a gpu.barrier inside '{op.name}', which only some threads of "
                              "the block run: the others never reach it and the block hangs; move it out.")  # fmt: skip
        both = writes & reads
        if both:
            value = next(iter(both))
            raise OpError(op, f"{PASS}: shared buffer {_name(value)} is both written and read inside "
                          f"'{op.name}', which only some threads of the block run, so no barrier can "
                          "separate the writes from the reads; write it and read it in separate stages.")  # fmt: skip


@dataclass(frozen=True)
class InsertGpuBarriersPass(ModulePass):
    """Put `gpu.barrier`s between the writes and reads of shared memory in every kernel."""

    name = "insert-gpu-barriers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, gpu.FuncOp) and kernel.body.blocks:
                _Placer().scan(kernel.body.block, _Pending())


__all__ = ["InsertGpuBarriersPass"]
