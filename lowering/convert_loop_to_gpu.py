"""`convert-loop-to-gpu`: each nest of loops bound to GPU indices becomes a kernel.

A `loop.for` of kind `blockIdx.x` ... `threadIdx.z` (a `sched.bind` of the
schedule) runs each iteration as one block or thread. Every outermost bound loop
of a function, with everything inside it, moves into a `gpu.func` kernel of the
function's `gpu.module @<function>_kernels`; in the function, a
`gpu.launch_func` launches it on a grid of the bound extents. In the kernel,
each bound loop's induction variable is the index (`gpu.block_id x`,
`gpu.thread_id x`, ...) and its body runs once; where a kernel binds one index
to loops of different extents (two stages under one `blockIdx.x`), the launch
takes the largest and the shorter loops are guarded by `index < extent`.

The kernel's operands are the memrefs and scalars it uses from the function
(its arguments); constants are copied in.

```mlir
func.func @add(%A: memref<1000xf32>, %C: memref<1000xf32>) {
  loop.for %bx = 0 to 16 blockIdx.x {
    loop.for %tx = 0 to 64 threadIdx.x { ... }
  }
}
```
becomes
```mlir
builtin.module attributes {gpu.container_module} {
  func.func @add(%A: memref<1000xf32>, %C: memref<1000xf32>) {
    gpu.launch_func @add_kernels::@add_kernel0 blocks in (%c16, %c1, %c1)
        threads in (%c64, %c1, %c1) args(%A : memref<1000xf32>, %C : memref<1000xf32>)
  }
  gpu.module @add_kernels {
    gpu.func @add_kernel0(%A: memref<1000xf32>, %C: memref<1000xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      ...
      gpu.return
    }
  }
}
```

A loop bound to a thread index that an enclosing loop binds already is the
same threads again, not a nested loop: each thread runs the iteration of its
own index (guarded where the inner loop is shorter). That is how a stage in
"shared" scope, computed at a serial loop inside the thread loops (the
reduction's outer loop of a tiled GEMM), is loaded by the block's threads
together; `insert-gpu-barriers` then puts the barriers between its writes and
reads. Each `loop.alloc ... shared` is one buffer per block.

Rejected, at the loop: more threads per block than `max-threads-per-block`
(1024 on every NVIDIA GPU since Fermi); a bound loop inside a loop that is not
bound, unless it binds again a thread index bound outside that loop; a thread
index bound again with more iterations than the block has threads of it; a
block index inside a thread index; a block index bound twice on one path; a
bound loop with a size known only when the program runs. At the buffer: a
"shared" buffer outside every kernel, one whose writes are not spread over
the block's threads by a thread-bound loop of its own (every thread would
write all of it), and more shared memory per block than
`max-shared-memory-per-block` bytes (48 KiB, the static limit of every NVIDIA
GPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from tilecraft.analysis.shared_memory import shared_allocs, shared_bytes, writing_ops
from tilecraft.dialects.loop import GPU_LOOP_KINDS, AllocOp, ForOp, GuardOp, YieldOp
from tilecraft.utils.diagnostics import OpError

PASS = "convert-loop-to-gpu"
_DIMS = {"x": gpu.DimensionEnum.X, "y": gpu.DimensionEnum.Y, "z": gpu.DimensionEnum.Z}


def bound_index(loop: ForOp) -> str | None:
    """"blockIdx.x", ... for a bound loop, else None."""
    kind = loop.kind.data.value
    return kind if kind in GPU_LOOP_KINDS else None


def _name(loop: ForOp) -> str:
    return f"loop '%{loop.var.name_hint}'" if loop.var.name_hint else "a loop"


def launch_dims(root: ForOp, max_threads: int) -> dict[str, int]:
    """The extent of each index bound in the nest under `root` (the largest of
    the loops bound to it), after checking the nest can be one kernel."""
    dims: dict[str, int] = {}

    def visit(op: Operation, path: list[ForOp], unbound: ForOp | None):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if isinstance(inner, ForOp) and (index := bound_index(inner)) is not None:
                        _check_place(inner, index, path, unbound)
                        dims[index] = max(dims.get(index, 1), inner.extent)
                        visit(inner, [*path, inner], unbound)
                    else:
                        visit(inner, path, unbound or (inner if isinstance(inner, ForOp) else None))

    _check_place(root, bound_index(root) or "", [], None)
    dims[bound_index(root) or ""] = root.extent
    visit(root, [root], None)
    threads = prod(n for index, n in dims.items() if index.startswith("threadIdx."))
    if threads > max_threads:
        raise OpError(
            root,
            f"{PASS}: this kernel runs {threads} threads per block "
            f"({' x '.join(f'{i} {n}' for i, n in dims.items() if i.startswith('threadIdx.'))}); "
            f"a block holds at most {max_threads}: split the thread-bound loops smaller.",
        )
    return dims


def _check_place(loop: ForOp, index: str, path: list[ForOp], unbound: ForOp | None) -> None:
    if not loop.is_static:
        raise OpError(loop, f"{PASS}: {_name(loop)} bound to {index} needs a static extent.")
    outer = next((o for o in path if bound_index(o) == index), None)
    if outer is not None and index.startswith("threadIdx."):
        # The threads of the block, bound again (a shared stage's cooperative
        # load inside the consumer's thread loops): each thread runs the
        # iteration of its own index, as TVM's thread IterVars are one per tag.
        if loop.extent > outer.extent:
            raise OpError(
                loop,
                f"{PASS}: {_name(loop)} is bound to {index} with {loop.extent} iterations inside "
                f"{_name(outer)}, which binds it with {outer.extent}: the block has only "
                f"{outer.extent} of those threads; split the inner loop by a factor of at most {outer.extent}.",
            )
        return
    if unbound is not None:
        raise OpError(
            loop,
            f"{PASS}: {_name(loop)} bound to {index} is inside {_name(unbound)}, which is not bound: "
            "every thread would run that loop, and threads that read what others wrote need "
            "barriers, which are not supported yet; bind the outer loop or move the bound one out.",
        )
    for outer in path:
        if bound_index(outer) == index:
            raise OpError(loop, f"{PASS}: {index} is bound twice on one path ({_name(outer)} and {_name(loop)}).")
        if index.startswith("blockIdx.") and bound_index(outer).startswith("threadIdx."):  # type: ignore[union-attr]
            raise OpError(loop, f"{PASS}: {_name(loop)} bound to {index} is inside thread-bound {_name(outer)}; "
                          "block indices go outside thread indices.")  # fmt: skip


def _captured(root: ForOp) -> list[SSAValue]:
    """Values `root`'s nest uses from outside it, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in root.walk():
        for value in op.operands:
            owner = value.owner
            inside = root.is_ancestor(owner if isinstance(owner, Operation) else owner.parent_op())  # type: ignore[arg-type]
            if not inside:
                seen.setdefault(value, None)
    return list(seen)


@dataclass
class _Outliner:
    module: ModuleOp
    function: func.FuncOp
    max_threads: int
    max_shared_bytes: int
    kernels: gpu.ModuleOp | None = None

    def outline(self, root: ForOp, number: int) -> None:
        dims = launch_dims(root, self.max_threads)
        check_shared(root, dims, self.max_shared_bytes)
        constants, operands = [], []
        for value in _captured(root):
            if isinstance(value.owner, arith.ConstantOp):
                constants.append(value)
            elif isinstance(value.owner, Block) and value.owner.parent_op() is self.function:
                operands.append(value)
            else:
                raise OpError(
                    value.owner if isinstance(value.owner, Operation) else root,
                    f"{PASS}: the kernel of {_name(root)} uses a value computed outside it on the "
                    "host; only the function's arguments and constants reach a kernel.",
                )
        name = f"{self.function.sym_name.data}_kernel{number}"
        body = Block(arg_types=[v.type for v in operands])
        for old, new in zip(operands, body.args):
            new.name_hint = old.name_hint
            old.replace_uses_with_if(new, lambda use: root.is_ancestor(use.operation))
        for old in constants:
            copy = old.owner.clone()  # type: ignore[union-attr]
            body.add_op(copy)
            old.replace_uses_with_if(copy.results[0], lambda use: root.is_ancestor(use.operation))
        host_block = root.parent_block()
        assert host_block is not None
        launch = self._launch(name, dims, operands)
        host_block.insert_ops_before(launch, root)
        root.detach()
        body.add_op(root)
        body.add_op(gpu.ReturnOp([]))
        for loop in [op for op in root.walk() if isinstance(op, ForOp) and bound_index(op)]:
            _inline_bound(loop, dims)
        kernel = gpu.FuncOp(name, FunctionType.from_lists(body.arg_types, []), Region(body), kernel=True)
        self._kernel_module().body.block.add_op(kernel)

    def _launch(self, name: str, dims: dict[str, int], operands: list[SSAValue]) -> list[Operation]:
        sizes = {}
        ops: list[Operation] = []
        for index in ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"):
            constant = arith.ConstantOp(IntegerAttr(dims.get(index, 1), IndexType()))
            ops.append(constant)
            sizes[index] = constant.result
        grid = [sizes[f"blockIdx.{d}"] for d in "xyz"]
        block = [sizes[f"threadIdx.{d}"] for d in "xyz"]
        symbol = SymbolRefAttr(f"{self.function.sym_name.data}_kernels", [name])
        ops.append(gpu.LaunchFuncOp(symbol, grid, block, kernelOperands=operands))
        return ops

    def _kernel_module(self) -> gpu.ModuleOp:
        if self.kernels is None:
            name = f"{self.function.sym_name.data}_kernels"
            self.kernels = gpu.ModuleOp(StringAttr(name), Region(Block()))  # type: ignore[arg-type]
            self.module.body.block.add_op(self.kernels)
        return self.kernels


def check_shared(root: ForOp, dims: dict[str, int], max_bytes: int) -> None:
    """The "shared" buffers of the kernel of `root`: within the block's limit,
    and written by threads each doing a part (a thread-bound loop between the
    buffer's allocation and each write)."""
    total = 0
    threads = any(index.startswith("threadIdx.") for index in dims)
    for alloc in shared_allocs(root):
        total += shared_bytes(alloc)
        if total > max_bytes:
            sizes = ", ".join(f"'{a.buffer_name.data}' {shared_bytes(a)}" for a in shared_allocs(root))
            raise OpError(
                alloc,
                f"{PASS}: the kernel of {_name(root)} needs {total} bytes of shared memory "
                f"with '{alloc.buffer_name.data}' ({sizes} bytes); a block has at most {max_bytes}: "
                "make the shared tiles smaller.",
            )
        if not threads:
            continue
        for writer in writing_ops(alloc.buffer):
            if not any(bound_index(loop) for loop in _loops_between(writer, alloc)):
                raise OpError(
                    alloc,
                    f"{PASS}: shared buffer '{alloc.buffer_name.data}' is written by every thread of the "
                    "block alike: its stage's loops are not bound to the block's threads; split them and "
                    "bind the parts to threadIdx.x/y so the threads load it together.",
                )


def _loops_between(op: Operation, alloc: AllocOp) -> list[ForOp]:
    """The loops around `op` inside the op that holds `alloc`."""
    top = alloc.parent_op()
    loops, parent = [], op.parent_op()
    while parent is not None and parent is not top:
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def _inline_bound(loop: ForOp, dims: dict[str, int]) -> None:
    """The loop's body, run once with its variable the block or thread index
    (under a guard where the launch has more of that index than the loop)."""
    index = bound_index(loop)
    assert index is not None
    kind, dim = index.split(".")
    read = (gpu.BlockIdOp if kind == "blockIdx" else gpu.ThreadIdOp)(gpu.DimensionAttr(_DIMS[dim]))
    read.result.name_hint = loop.var.name_hint
    block = loop.parent_block()
    assert block is not None
    block.insert_op_before(read, loop)
    loop.var.replace_all_uses_with(read.result)
    body_ops = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
    for op in body_ops:
        op.detach()
    if loop.extent < dims[index]:
        extent = arith.ConstantOp(IntegerAttr(loop.extent, IndexType()))
        inside = arith.CmpiOp(read.result, extent.result, "slt")
        guard = GuardOp(inside.result)
        block.insert_ops_before([extent, inside, guard], loop)
        guard.body.block.insert_ops_before(body_ops, guard.body.block.first_op)  # type: ignore[arg-type]
    else:
        block.insert_ops_before(body_ops, loop)
    loop.detach()
    loop.erase()


@dataclass(frozen=True)
class ConvertLoopToGpuPass(ModulePass):
    """Outline each nest of GPU-bound loops into a `gpu.func` kernel and launch it."""

    name = "convert-loop-to-gpu"

    max_threads_per_block: int = 1024
    """The most threads one block may hold (the device's limit)."""

    max_shared_memory_per_block: int = 48 * 1024
    """The most bytes of static shared memory one block may use."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outlined = False
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if not function.body.blocks:
                continue
            _reject_nested_roots(function)
            _reject_host_shared(function)
            outliner = _Outliner(op, function, self.max_threads_per_block, self.max_shared_memory_per_block)
            roots = [o for o in function.body.block.ops if isinstance(o, ForOp) and bound_index(o)]
            for number, root in enumerate(roots):
                outliner.outline(root, number)
            outlined = outlined or bool(roots)
        if outlined:
            op.attributes["gpu.container_module"] = UnitAttr()


def _reject_host_shared(function: func.FuncOp) -> None:
    """A "shared" buffer belongs to a block: it must be allocated inside a kernel."""
    for op in shared_allocs(function):
        outer = op.parent_op()
        while outer is not function and not (isinstance(outer, ForOp) and bound_index(outer)):
            outer = outer.parent_op()  # type: ignore[union-attr]
        if outer is function:
            raise OpError(
                op,
                f"{PASS}: shared buffer '{op.buffer_name.data}' is outside every kernel; shared memory "
                "belongs to a block: compute the stage at a loop inside the block-bound loops.",
            )


def _reject_nested_roots(function: func.FuncOp) -> None:
    """A bound loop must start its kernel at the function's top level."""
    for op in function.walk():
        if not isinstance(op, ForOp) or not bound_index(op) or op.parent_op() is function:
            continue
        outer = op.parent_op()
        while outer is not function and not (isinstance(outer, ForOp) and bound_index(outer)):
            outer = outer.parent_op()  # type: ignore[union-attr]
        if outer is function:
            parent = op.parent_op()
            while not isinstance(parent, ForOp | func.FuncOp):
                parent = parent.parent_op()  # type: ignore[union-attr]
            where = _name(parent) if isinstance(parent, ForOp) else f"a '{op.parent_op().name}'"  # type: ignore[union-attr]
            raise OpError(
                op,
                f"{PASS}: {_name(op)} bound to {bound_index(op)} is inside {where}, which is not bound: "
                "the kernel would be launched once per iteration on the host; bind the outermost loops.",
            )


__all__ = ["ConvertLoopToGpuPass", "check_shared", "launch_dims"]
