"""Whole-program facts about an `accel.program`: its token edges, the dependence flags
they become, and the checks a stream must pass before the machine runs it.

Queues
------
VTA has four token queues, each from one module to a neighbour (`QUEUES`). An
instruction of module U pops with `pop_prev` (`pop_next`) from the queue that the
previous (next) module pushes into U, and pushes with `push_prev` (`push_next`) into
the queue towards it. The k-th pop on a queue takes the k-th push.

Tokens -> flags (`plan_flags`)
------------------------------
A token edge producer -> consumer between two modules needs the consumer to pop a push
that comes at or after the producer in the producer's module (the module runs in order,
so that push means the producer has finished). Per queue, walk the consumers in stream
order and keep each one's latest producer; an edge whose producer is not later than the
producer some earlier consumer already synchronised with is implied by stream order and
dropped. The kept pairs then have strictly increasing producers and consumers, so the
k-th push is the k-th pop's: each producer pushes once, each consumer pops once, per
queue. Tokens point backwards in the stream (a consumer after its producer), so the
stream order itself is a schedule that never waits forever: the flags cannot deadlock.

Flag streams (`check_flag_stream`)
----------------------------------
At flag level the counts must match per queue (every pop has a push and every push a
pop), and an abstract run of the three in-order modules with one counter per queue —
each step runs the earliest (in stream order) module head whose pops are available —
must reach the end: otherwise it names the instructions that wait forever. Linear time.

The program verifier (`check_program`)
--------------------------------------
What `accel.program` verifies beyond each op alone, installed on the dialect when this
module is imported (`register_program_check`; `backends/accel/program.py` imports it;
the dialects layer cannot import the backend that reads specs): the spec itself, each value against its bit field at that
spec and each LOAD/STORE against its buffer's depth (`check_fields`), kernels by name,
one FINISH at the end, no two DRAM regions (buffers, kernels) overlapping, tokens
(`token_edges`) or flags (`check_flag_stream`), and the GEMM/ALU index ranges and uop
buffer contents as `backends/accel/program.program_from_ir` lays the stream out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from tilecraft.backends.accel import isa
from tilecraft.backends.accel.program import (
    elem_bytes,
    instruction_of,
    micro_op,
    place_kernels,
    program_from_ir,
    spec_of,
)
from tilecraft.backends.accel.spec import AccelSpec, SpecError
from tilecraft.dialects.accel import (
    AluOp,
    BufferOp,
    FinishOp,
    GemmOp,
    InstructionOp,
    LoadOp,
    MemoryType,
    ProgramOp,
    StoreOp,
    Unit,
    UopKernelOp,
    UopOp,
    register_program_check,
)
from tilecraft.utils.diagnostics import OpError, location_of

Queue = tuple[Unit, Unit]  # (from, to)
QUEUES: tuple[Queue, ...] = (
    (Unit.LOAD, Unit.COMPUTE),
    (Unit.COMPUTE, Unit.LOAD),
    (Unit.COMPUTE, Unit.STORE),
    (Unit.STORE, Unit.COMPUTE),
)


def _neighbour(unit: Unit, side: str) -> Unit | None:
    index = unit.value + (-1 if side == "prev" else 1)
    return Unit(index) if 0 <= index <= 2 else None


def queue_name(queue: Queue) -> str:
    return f"{queue[0].name.lower()}->{queue[1].name.lower()}"


def flag_queue(unit: Unit, flag: str) -> Queue | None:
    """The queue a flag of an instruction of `unit` pops or pushes (None: no neighbour)."""
    action, side = flag.split("_")
    other = _neighbour(unit, side)
    if other is None:
        return None
    return (other, unit) if action == "pop" else (unit, other)


def flags_for(producer: Unit, consumer: Unit) -> tuple[str, str]:
    """(push flag on the producer, pop flag on the consumer) of a cross-module edge."""
    side = "next" if consumer.value > producer.value else "prev"
    back = "prev" if side == "next" else "next"
    return f"push_{side}", f"pop_{back}"


class StreamError(Exception):
    """A flag stream fails a check: `index` is the instruction at fault."""

    def __init__(self, index: int, message: str, others: tuple[int, ...] = ()):
        self.index = index
        self.message = message
        self.others = others
        super().__init__(message)


def check_flag_stream(
    units: list[Unit], flags: list[set[str]], describe: Callable[[int], str] = lambda i: f"instruction {i}"
) -> None:
    """Raise `StreamError` unless every pop has its push, every push its pop, and the
    three modules can run the stream to its end (see the module docstring)."""
    pushes: dict[Queue, list[int]] = defaultdict(list)
    pops: dict[Queue, list[int]] = defaultdict(list)
    for index, (unit, names) in enumerate(zip(units, flags)):
        for name in sorted(names):
            queue = flag_queue(unit, name)
            if queue is None:
                side = name.split("_")[1]
                where = "previous" if side == "prev" else "next"
                raise StreamError(index, f"{name}: the {unit.name.lower()} module has no {where} module")
            (pops if name.startswith("pop") else pushes)[queue].append(index)
    for queue in QUEUES:
        n_push, n_pop = len(pushes[queue]), len(pops[queue])
        if n_pop > n_push:
            raise StreamError(
                pops[queue][n_push],
                f"pop {n_push + 1} on the {queue_name(queue)} queue has no matching push "
                f"(the stream pushes {n_push} times and pops {n_pop} times)",
            )
        if n_push > n_pop:
            raise StreamError(
                pushes[queue][n_pop],
                f"push {n_pop + 1} on the {queue_name(queue)} queue is never popped "
                f"(the stream pushes {n_push} times and pops {n_pop} times)",
            )
    # The abstract run: one cursor per module, one counter per queue.
    streams = {unit: [i for i, u in enumerate(units) if u == unit] for unit in Unit}
    cursor = {unit: 0 for unit in Unit}
    tokens = {queue: 0 for queue in QUEUES}
    queues_of = [
        ([flag_queue(u, f) for f in ("pop_prev", "pop_next") if f in names],
         [flag_queue(u, f) for f in ("push_prev", "push_next") if f in names])
        for u, names in zip(units, flags)
    ]  # fmt: skip
    remaining = len(units)
    while remaining:
        ready = None
        for unit in Unit:
            if cursor[unit] == len(streams[unit]):
                continue
            index = streams[unit][cursor[unit]]
            if all(tokens[q] > 0 for q in queues_of[index][0]) and (ready is None or index < ready[1]):
                ready = (unit, index)
        if ready is None:
            blocked = []
            for unit in Unit:
                if cursor[unit] < len(streams[unit]):
                    index = streams[unit][cursor[unit]]
                    waits = [queue_name(q) for q in queues_of[index][0] if tokens[q] == 0]
                    blocked.append((index, f"the {unit.name.lower()} module waits on {', '.join(waits)}"))
            blocked.sort()
            raise StreamError(
                blocked[0][0],
                "the stream deadlocks: " + "; ".join(f"{text} ({describe(i)})" for i, text in blocked),
                tuple(i for i, _ in blocked[1:]),
            )
        unit, index = ready
        for queue in queues_of[index][0]:
            tokens[queue] -= 1
        for queue in queues_of[index][1]:
            tokens[queue] += 1
        cursor[unit] += 1
        remaining -= 1


# -- tokens -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Edge:
    producer: InstructionOp
    consumer: InstructionOp


def instructions(program: ProgramOp) -> list[InstructionOp]:
    return [op for op in program.body.block.ops if isinstance(op, InstructionOp)]


def token_edges(program: ProgramOp, position: dict[InstructionOp, int] | None = None) -> list[Edge]:
    """The cross-module token edges, each checked: the producer is an earlier instruction
    of this program, and load and store are not joined directly (`OpError` otherwise)."""
    ops = instructions(program)
    if position is None:
        position = {op: i for i, op in enumerate(ops)}
    edges = []
    for op in ops:
        for dep in op.deps:
            producer = dep.owner
            if not isinstance(producer, InstructionOp) or producer not in position:
                raise OpError(op, f"'{op.name}' op: a token operand must come from an instruction of this accel.program.")
            if position[producer] >= position[op]:
                raise OpError(
                    op,
                    f"'{op.name}' op: waits on the {producer.name} at {location_of(producer)}, which comes "
                    "later in the stream; the order of this dependence cannot be kept",
                )
            if {producer.unit, op.unit} == {Unit.LOAD, Unit.STORE}:
                raise OpError(
                    op,
                    f"'{op.name}' op: waits on the {producer.name} at {location_of(producer)}: the load and "
                    "store modules share no token queue (VTA's queues join load and store to compute only); "
                    "make the dependence go through a compute instruction",
                )
            if producer.unit != op.unit:
                edges.append(Edge(producer, op))
    return edges


def plan_flags(program: ProgramOp) -> dict[InstructionOp, set[str]]:
    """The dependence flags of each instruction that the program's token edges need
    (see the module docstring); instructions without flags are absent."""
    ops = instructions(program)
    position = {op: i for i, op in enumerate(ops)}
    latest: dict[Queue, dict[InstructionOp, InstructionOp]] = defaultdict(dict)
    for edge in token_edges(program, position):
        queue = (edge.producer.unit, edge.consumer.unit)
        known = latest[queue].get(edge.consumer)
        if known is None or position[edge.producer] > position[known]:
            latest[queue][edge.consumer] = edge.producer
    flags: dict[InstructionOp, set[str]] = defaultdict(set)
    for queue, producers in latest.items():
        synchronised = -1
        for consumer in sorted(producers, key=position.__getitem__):
            producer = producers[consumer]
            if position[producer] <= synchronised:
                continue  # an earlier consumer of this module already waited for it
            synchronised = position[producer]
            push, pop = flags_for(*queue)
            flags[producer].add(push)
            flags[consumer].add(pop)
    return dict(flags)


# -- the program verifier ------------------------------------------------------------------------
def _fail(op, message: str) -> OpError:
    return OpError(op, f"'{op.name}' op: {message}")


def check_fields(op, spec: AccelSpec) -> None:
    """One op against the spec: each value fits its bit field of isa's layout, and a
    LOAD/STORE stays inside its buffer."""
    try:
        if isinstance(op, UopOp):
            isa.encode_uop(micro_op(op.indices()), spec)
            return
        if isinstance(op, (GemmOp, AluOp)) and op.kernel is not None:
            insn = instruction_of(op, 0, 1)  # the range comes with the kernel's placement
        else:
            insn = instruction_of(op)
        isa.encode(insn, spec)
    except isa.EncodingError as e:
        raise _fail(op, str(e)) from None
    if isinstance(op, (LoadOp, StoreOp)):
        depth = {
            MemoryType.UOP: spec.uop_depth,
            MemoryType.INP: spec.inp_depth,
            MemoryType.WGT: spec.wgt_depth,
            MemoryType.ACC: spec.acc_depth,
            MemoryType.OUT: spec.out_depth,
        }.get(op.mem)
        base, extent = op.field("sram_base"), op.sram_extent()
        if depth is not None and base + extent > depth:
            raise _fail(op, f"the {op.mem.value} buffer range [{base}, {base + extent}) passes its depth {depth}.")


def check_program(program: ProgramOp) -> None:
    """Everything `accel.program` verifies beyond each op alone; `OpError` names the op."""
    try:
        spec = spec_of(program)
    except SpecError as e:
        raise _fail(program, f"bad spec: {e}") from None
    for op in program.body.block.ops:
        if isinstance(op, InstructionOp):
            check_fields(op, spec)
        elif isinstance(op, UopKernelOp):
            for uop in op.body.block.ops:
                check_fields(uop, spec)
    ops = instructions(program)
    # (a symbol defined twice is found by the program's SymbolTable trait)
    kernels = {op.sym_name.data for op in program.body.block.ops if isinstance(op, UopKernelOp)}
    for op in ops:
        if isinstance(op, (GemmOp, AluOp)) and op.kernel is not None and op.kernel.data not in kernels:
            raise _fail(op, f"no accel.uop_kernel @{op.kernel.data} in this program.")
    finishes = [op for op in ops if isinstance(op, FinishOp)]
    if finishes and (len(finishes) > 1 or finishes[0] is not ops[-1]):
        raise OpError(finishes[0], "'accel.finish' op: a stream has one accel.finish, its last instruction.")
    # DRAM: buffers and kernels do not overlap.
    placement = place_kernels(program)
    regions = []
    for op in program.body.block.ops:
        if isinstance(op, BufferOp):
            size = elem_bytes(isa.MemoryType[op.mem.name], spec)
            regions.append((op.dram_base.data * size, (op.dram_base.data + op.elems.data) * size, op))
        elif isinstance(op, UopKernelOp):
            start = placement[op.sym_name.data] * 4
            regions.append((start, start + 4 * len(op.uops()), op))
    # In address order, each non-empty region must start at or after the furthest end so far.
    furthest: tuple[int, int, object] | None = None
    for start, end, op in sorted((r for r in regions if r[0] < r[1]), key=lambda r: (r[0], r[1])):
        if furthest is not None and start < furthest[1]:
            first_start, first_end, first = furthest
            raise _fail(
                op,
                f"its DRAM bytes [{start:#x}, {end:#x}) overlap those of the "
                f"{first.name} at {location_of(first)} [{first_start:#x}, {first_end:#x}).",
            )
        if furthest is None or end > furthest[1]:
            furthest = (start, end, op)
    # Tokens or flags.
    edges = token_edges(program)
    flagged = next((op for op in ops if op.flags()), None)
    if edges and flagged is not None:
        raise OpError(
            flagged,
            f"'{flagged.name}' op: the program mixes dependence flags with tokens between modules "
            f"(e.g. the {edges[0].consumer.name} at {location_of(edges[0].consumer)}); use one or the other",
        )
    if not edges:
        try:
            check_flag_stream(
                [op.unit for op in ops],
                [set(op.flags()) for op in ops],
                lambda i: f"{ops[i].name} at {location_of(ops[i])}",
            )
        except StreamError as e:
            raise OpError(ops[e.index], f"'{ops[e.index].name}' op: {e.message}") from None
    # Index ranges and the uop buffer, as the backend lays the stream out.
    program_from_ir(program, require_flags=False)


register_program_check(check_program)
