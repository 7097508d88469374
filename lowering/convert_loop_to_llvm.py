"""`convert-loop-to-llvm`: the loop program as LLVM IR (xDSL's `llvm` dialect).

Each `func.func` of memref arguments becomes an `llvm.func` of pointers
(`noalias`, aligned to the element, `dereferenceable` for the whole buffer), and
its body is written in one forward sweep (no rewrite patterns: the loop kinds
decide how often and in which form a body is written, which a sweep with an IR
builder says directly and in linear time):

- `loop.for` serial: a counted loop, `br ^body(lb)` ... `cond_br %more,
  ^body(%next), ^exit` (bottom-tested; the extent is static and non-zero);
- unrolled: the body written once per iteration with the variable a constant, so
  small "local" accumulators are indexed by constants and LLVM's SROA turns them
  into registers;
- vectorized: the body written once for W lanes at a time (`backends/llvm/
  vectorize.py`, `memory.py`), with masks for lane-varying guards;
- parallel (the outermost one; inner ones run serially): the body is outlined
  into `@<f>_parallelN_body(captures..., %begin, %end)` and a task
  `@<f>_parallelN(%ctx, %thread, %threads)` that unpacks the captured values from
  a context struct and runs its share of the iterations; the loop itself becomes
  `llvm.call @tilecraft_parallel_launch(@<f>_parallelN, %ctx)`, which the backend's
  runtime (`backends/llvm/runtime.py`) runs on all cores.
- `loop.guard`, `scf.if`: branches (uniform conditions) or masks (lane-varying);
- `loop.alloc`: "local"/"shared" buffers up to 256 KiB are `llvm.alloca`s in the
  function's entry block, 64-byte aligned; larger ones and "global" ones come
  from `aligned_alloc(64, ...)` and are freed at the end of their block;
- `arith`/`math`: `backends/llvm/ops.py`; memory access: `backends/llvm/memory.py`.

Float arithmetic carries the fast-math flags `contract` (so multiply-adds become
FMAs) and, unless the option `reassociate=false` is given, `reassoc` (so LLVM may
vectorize the reductions left in serial loops).

Where xDSL's `llvm` dialect has no op for an instruction (vector fcmp/select,
fptosi, masked and gather/scatter memory access), the small `llvmx` dialect in
`backends/llvm/llvmx.py` says it.

```mlir
func.func @scale(%A: memref<64xf32> {tc.name = "A"}, %B: memref<64xf32>) {
  loop.for %i = 0 to 64 vectorized {
    %a = memref.load %A[%i] : memref<64xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %B[%i] : memref<64xf32>
  }
  func.return
}
```
becomes
```mlir
llvm.func @scale(%A: !llvm.ptr {llvm.noalias, llvm.align = 4 : i64, ...}, %B: ...) {
  llvm.br ^bb1        // from the prologue block, which holds constants and allocas
^bb1:
  %a = llvm.load %A {alignment = 4 : i64} : !llvm.ptr -> vector<64xf32>
  %b = llvm.fmul %a, %a {fastmathFlags = #llvm.fastmath<reassoc,contract>} : vector<64xf32>
  llvm.store %b, %B {alignment = 4 : i64} : vector<64xf32>, !llvm.ptr
  llvm.return
}
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from tilecraft.backends.llvm.builder import PTR, FunctionBuilder, lanes_type, scalar_type
from tilecraft.backends.llvm.memory import element_bytes, lower_load, lower_store, memory_type
from tilecraft.backends.llvm.ops import HANDLERS, OpLowering
from tilecraft.backends.llvm.vectorize import (
    Affine,
    Lanes,
    Lowered,
    Vec,
    affine_arith,
    is_uniform,
    materialize,
    max_lanes,
    vectorization_blocker,
)
from tilecraft.dialects.loop import AllocOp, ForOp, GuardOp, ViewOp
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

PASS = "convert-loop-to-llvm"
# "local" buffers larger than this go to the heap: worker threads have small stacks.
MAX_STACK_BYTES = 256 * 1024
BUFFER_ALIGNMENT = 64
# Small buffers get a stack slot per copy (SROA keeps them apart in registers).
SHARED_SLOT_BYTES = 4096


class ModuleLowering:
    """The `llvm.func`s of one module: kernels, outlined parallel tasks, declarations."""

    def __init__(self, fastmath: llvm.FastMathAttr):
        self.fastmath = fastmath
        self.functions: list[llvm.FuncOp] = []
        self._declared: set[str] = set()

    def declare(self, name: str, inputs: list[Attribute], output: Attribute | None) -> None:
        """Declare external function `name` (libc, libm, the runtime) once."""
        if name not in self._declared:
            self._declared.add(name)
            ftype = llvm.LLVMFunctionType(inputs, output)
            self.functions.append(llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external")))

    def define(
        self,
        name: str,
        inputs: list[Attribute],
        linkage: str,
        arg_attrs: list[dict[str, Attribute]] | None = None,
    ) -> llvm.FuncOp:
        """A new `void` function with a body; `nounwind`: nothing here throws."""
        props: dict[str, Attribute | None] = {"no_unwind": UnitAttr()}
        if arg_attrs is not None:
            props["arg_attrs"] = ArrayAttr([DictionaryAttr(a) for a in arg_attrs])
        function = llvm.FuncOp(
            name,
            llvm.LLVMFunctionType(inputs, None),
            linkage=llvm.LinkageAttr(linkage),
            other_props=props,
        )
        self.functions.append(function)
        return function

    def lower_function(self, op: func.FuncOp) -> None:
        if not op.body.blocks:
            raise OpError(
                op,
                f"{PASS}: function declarations are not supported; "
                f"give '{op.sym_name.data}' a body.",
            )
        if op.function_type.outputs.data:
            raise OpError(
                op, f"{PASS}: functions return nothing; write results to output memref arguments."
            )
        inputs: list[Attribute] = []
        attrs: list[dict[str, Attribute]] = []
        for i, t in enumerate(op.function_type.inputs.data):
            if not isinstance(t, MemRefType) or any(d < 0 for d in t.get_shape()):
                raise OpError(
                    op,
                    f"{PASS}: argument #{i + 1} of '{op.sym_name.data}' has type {t}; "
                    "only statically shaped memrefs are supported.",
                )
            size = element_bytes(t.element_type)
            arg = {
                "llvm.noalias": UnitAttr(),
                "llvm.nonnull": UnitAttr(),
                "llvm.align": IntegerAttr(size, i64),
                "llvm.dereferenceable": IntegerAttr(size * prod(t.get_shape()), i64),
            }
            if op.arg_attrs is not None:
                for key in ("tc.name", "tc.weight"):
                    if key in op.arg_attrs.data[i].data:
                        arg[key] = op.arg_attrs.data[i].data[key]
            inputs.append(PTR)
            attrs.append(arg)
        function = self.define(op.sym_name.data, inputs, "external", attrs)
        lowering = FunctionLowering(self, function, op.sym_name.data, in_parallel=False)
        lowering.values.update(zip(op.body.block.args, lowering.b.args))
        lowering.run_block(op.body.block)
        lowering.b.finish()


class FunctionLowering:
    """Writes the body of one `llvm.func` from loop IR (see the module docstring)."""

    def __init__(self, module: ModuleLowering, function: llvm.FuncOp, name: str, in_parallel: bool):
        self.module = module
        self.b = FunctionBuilder(function)
        self.name = name
        self.in_parallel = in_parallel
        self.values: dict[SSAValue, Lowered] = {}
        self.lanes: Lanes | None = None
        self._heap_buffers: list[list[SSAValue]] = []
        self._stack_slots: dict[AllocOp, SSAValue] = {}
        self._outlined = 0

    # Values -----------------------------------------------------------------

    def get(self, value: SSAValue) -> Lowered:
        return self.values[value]

    def vector(self, value: Lowered) -> SSAValue:
        assert self.lanes is not None
        return materialize(self.b, value, self.lanes.width)

    # Blocks and ops ---------------------------------------------------------

    def run_block(self, block: Block) -> list[Lowered]:
        """Lower `block`'s ops; return what its terminator yields."""
        self._heap_buffers.append([])
        yielded: list[Lowered] = []
        for op in block.ops:
            if op.has_trait(IsTerminator):
                yielded = [self.get(v) for v in op.operands]
                self._free_heap_buffers()
                if isinstance(op, func.ReturnOp):
                    self.b.add(llvm.ReturnOp())
                return yielded
            self.lower_op(op)
        self._free_heap_buffers()
        return yielded

    def lower_op(self, op: Operation) -> None:
        if isinstance(op, ForOp):
            self.lower_for(op)
        elif isinstance(op, GuardOp):
            self.lower_guard(op)
        elif isinstance(op, scf.IfOp):
            self.lower_if(op)
        elif isinstance(op, AllocOp):
            self.lower_alloc(op)
        elif isinstance(op, ViewOp):
            source = self.get(op.source)
            self.values[op.result] = self.b.gep(source, self.b.index(op.offset.data), i8)  # type: ignore[arg-type]
        elif isinstance(op, func.CallOp):
            self.lower_call(op)
        elif isinstance(op, memref.LoadOp):
            indices = [self.get(i) for i in op.indices]
            ref = self.get(op.memref)
            self.values[op.res] = lower_load(self.b, op, ref, indices, self.lanes)  # type: ignore[arg-type]
        elif isinstance(op, memref.StoreOp):
            indices = [self.get(i) for i in op.indices]
            ref = self.get(op.memref)
            lower_store(self.b, op, self.get(op.value), ref, indices, self.lanes)  # type: ignore[arg-type]
        elif isinstance(op, arith.ConstantOp):
            self.lower_constant(op)
        elif type(op) in HANDLERS:
            self.lower_compute(op)
        else:
            raise OpError(
                op,
                f"{PASS}: '{op.name}' is not supported; "
                "lower it to loop, memref, scf.if, arith or math ops first.",
            )

    def lower_constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        if not isinstance(value, IntegerAttr | FloatAttr):
            raise OpError(op, f"{PASS}: only scalar constants are supported, not {value}.")
        self.values[op.result] = self.b.const(value.value.data, scalar_type(op.result.type))

    def lower_compute(self, op: Operation) -> None:
        args = [self.get(v) for v in op.operands]
        result = op.results[0]
        if self.lanes is not None and isinstance(result.type, IndexType):
            kind = {arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul"}.get(type(op))
            affine = affine_arith(self.b, kind, *args) if kind else None
            if affine is not None:
                self.values[result] = affine
                return
        vector = self.lanes is not None and not all(is_uniform(a) for a in args)
        width = self.lanes.width if vector else None  # type: ignore[union-attr]
        llvm_args = [self.vector(a) for a in args] if vector else args
        mask = self.lanes.mask if vector else None  # type: ignore[union-attr]
        lowering = OpLowering(self.b, self.module.fastmath, mask, self.module.declare)
        result_type = lanes_type(result.type, width)
        value = HANDLERS[type(op)](lowering, op, llvm_args, result_type)  # type: ignore[arg-type]
        self.values[result] = Vec(value) if vector else value

    # Loops ------------------------------------------------------------------

    def counted_loop(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: int,
        body: Callable[[SSAValue], None],
        maybe_empty: bool,
    ) -> None:
        """`for (iv = lb; iv < ub; iv += step) body(iv)`, bottom-tested."""
        b = self.b
        header = Block(arg_types=[i64])
        exit_block = Block()
        if maybe_empty:
            b.cond_br(b.icmp("slt", lb, ub), header, [lb], exit_block)
        else:
            b.br(header, lb)
        b.start(header)
        body(header.args[0])
        following = b.iadd(header.args[0], b.index(step), nsw=True)
        b.cond_br(b.icmp("slt", following, ub), header, [following], exit_block)
        b.start(exit_block)

    def lower_for(self, op: ForOp) -> None:
        lb, extent, kind = op.lb.data, op.extent, op.kind.data
        if extent == 0:
            return
        if extent == 1 or kind == "unrolled":
            for i in range(lb, lb + extent):
                self.values[op.var] = self.b.index(i)
                self.run_block(op.body.block)
        elif kind == "vectorized" and self.lanes is None and vectorization_blocker(op) is None:
            self.lower_vectorized(op)
        elif kind == "parallel" and self.lanes is None and not self.in_parallel:
            self.lower_parallel(op)
        else:
            self.lower_serial(op, self.b.index(lb), self.b.index(op.ub.data), maybe_empty=False)

    def lower_serial(self, op: ForOp, lb: SSAValue, ub: SSAValue, maybe_empty: bool) -> None:
        def body(iv: SSAValue) -> None:
            self.values[op.var] = iv
            self.run_block(op.body.block)

        self.counted_loop(lb, ub, 1, body, maybe_empty)

    def lower_vectorized(self, op: ForOp) -> None:
        width = max_lanes(op)
        lb, extent = op.lb.data, op.extent

        def vector_body(lanes: int) -> Callable[[SSAValue], None]:
            def body(base: SSAValue) -> None:
                self.lanes = Lanes(lanes)
                self.values[op.var] = Affine(base, 1)
                self.run_block(op.body.block)
                self.lanes = None

            return body

        full = extent // width if extent > width else 0
        if full:
            end = lb + full * width
            self.counted_loop(self.b.index(lb), self.b.index(end), width, vector_body(width), False)
            lb = end
        if (tail := extent - full * width) > 0:
            vector_body(tail)(self.b.index(lb))

    # Conditions -------------------------------------------------------------

    def lower_guard(self, op: GuardOp) -> None:
        cond = self.get(op.cond)
        if is_uniform(cond):
            self._branch(cond, lambda: self.run_block(op.body.block), None)  # type: ignore[arg-type]
            return
        self._masked(self.vector(cond), lambda: self.run_block(op.body.block))

    def lower_if(self, op: scf.IfOp) -> None:
        cond = self.get(op.cond)
        then_region = lambda: self.run_block(op.true_region.block)  # noqa: E731
        else_region = (
            (lambda: self.run_block(op.false_region.block)) if op.false_region.blocks else None
        )
        if is_uniform(cond):
            results = self._branch(cond, then_region, else_region)  # type: ignore[arg-type]
        else:
            mask = self.vector(cond)
            taken = self._masked(mask, then_region)
            not_taken = self.b.add(llvm.XOrOp(mask, self.b.const(1, mask.type)))
            other = self._masked(not_taken, else_region) if else_region else []
            results = [
                Vec(self.b.select(mask, self.vector(t), self.vector(e)))
                for t, e in zip(taken, other)
            ]
        self.values.update(zip(op.results, results))

    def _masked(self, cond: SSAValue, body: Callable[[], list[Lowered]]) -> list[Lowered]:
        """Run `body` with only the lanes where `cond` holds active."""
        lanes = self.lanes
        assert lanes is not None
        outer = lanes.mask
        lanes.mask = cond if outer is None else self.b.add(llvm.AndOp(outer, cond))
        results = body()
        lanes.mask = outer
        return results

    def _branch(
        self,
        cond: SSAValue,
        then: Callable[[], list[Lowered]],
        other: Callable[[], list[Lowered]] | None,
    ) -> list[Lowered]:
        """if/else on a uniform condition; returns the values of the merge block."""
        b = self.b
        if cond in b.known:  # a guard folded to a constant: no branch at all
            chosen = then if b.known[cond] else other
            return chosen() if chosen else []
        then_block, else_block = Block(), Block()
        b.cond_br(cond, then_block, [], else_block)
        b.start(then_block)
        then_values, then_end = then(), b.block
        b.start(else_block)
        else_values, else_end = (other() if other else []), b.block
        # A result is a vector if either side yields one.
        vector = [not (is_uniform(t) and is_uniform(e)) for t, e in zip(then_values, else_values)]
        incoming = []
        for values, end in ((then_values, then_end), (else_values, else_end)):
            b.resume(end)
            incoming.append([self.vector(v) if vec else v for v, vec in zip(values, vector)])
        merge = Block(arg_types=[v.type for v in incoming[0]])  # type: ignore[union-attr]
        for values, end in zip(incoming, (then_end, else_end)):
            b.resume(end)
            b.br(merge, *values)  # type: ignore[arg-type]
        b.start(merge)
        return [Vec(a) if vec else a for a, vec in zip(merge.args, vector)]

    def lower_call(self, op: func.CallOp) -> None:
        if op.results or not all(isinstance(a.type, MemRefType) for a in op.arguments):
            raise OpError(
                op, f"{PASS}: a call passes memrefs and returns nothing (the loop calling convention)."
            )
        if self.lanes is not None:
            raise OpError(op, f"{PASS}: a call cannot be vectorized.")
        self.b.call(op.callee.root_reference.data, [self.get(a) for a in op.arguments])  # type: ignore[misc]

    # Buffers ----------------------------------------------------------------

    def lower_alloc(self, op: AllocOp) -> None:
        mtype = op.buffer.type
        assert isinstance(mtype, MemRefType)
        stored = memory_type(mtype.element_type)
        count = prod(mtype.get_shape())
        size = count * element_bytes(mtype.element_type)
        if op.scope.data != "global" and size <= MAX_STACK_BYTES:
            # Copies of one alloc (an unrolled loop writes its body several times)
            # share a stack slot once it is big: their lifetimes do not overlap.
            if size <= SHARED_SLOT_BYTES or op not in self._stack_slots:
                self._stack_slots[op] = self.b.alloca(stored, count, BUFFER_ALIGNMENT)
            self.values[op.buffer] = self._stack_slots[op]
            return
        self.module.declare("aligned_alloc", [i64, i64], PTR)
        rounded = -(-size // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT  # aligned_alloc wants a multiple
        pointer = self.b.call(
            "aligned_alloc", [self.b.index(BUFFER_ALIGNMENT), self.b.index(rounded)], PTR
        )
        self.values[op.buffer] = pointer  # type: ignore[assignment]
        self._heap_buffers[-1].append(pointer)  # type: ignore[arg-type]

    def _free_heap_buffers(self) -> None:
        buffers = self._heap_buffers.pop()
        if buffers:
            self.module.declare("free", [PTR], None)
        for pointer in reversed(buffers):
            self.b.call("free", [pointer])

    # Parallel loops ---------------------------------------------------------

    def lower_parallel(self, op: ForOp) -> None:
        """Outline the loop into a task the runtime runs once per thread."""
        from tilecraft.backends.llvm.parallel import outline_parallel_loop

        name = f"{self.name}_parallel{self._outlined}"
        self._outlined += 1
        outline_parallel_loop(self, op, name)


def lower_module(module: ModuleOp, fastmath: llvm.FastMathAttr) -> list[llvm.FuncOp]:
    lowering = ModuleLowering(fastmath)
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise OpError(
                op,
                f"{PASS}: expected only func.func at module level, found '{op.name}'; "
                "lower it to loops first.",
            )
        lowering.lower_function(op)
    return lowering.functions


@dataclass(frozen=True)
class ConvertLoopToLlvmPass(ModulePass):
    """Lower loop-level functions to xDSL's llvm dialect (plus `llvmx`)."""

    name = "convert-loop-to-llvm"

    reassociate: bool = True
    """Let LLVM reassociate float arithmetic (needed to vectorize reductions)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        flags = ["contract", "reassoc"] if self.reassociate else ["contract"]
        functions = lower_module(op, llvm.FastMathAttr([llvm.FastMathFlag(f) for f in flags]))
        block = op.body.block
        for old in list(block.ops):
            block.detach_op(old)
        block.add_ops(functions)
