"""The accelerator simulator (backends/accel/simulator.py) and its DRAM (dram.py): the
cycle model on hand-timed streams, every error case, and random GEMM/ALU programs
checked against a step-by-step reference written from VTA's simulator semantics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tilecraft.backends.accel.dram import Dram, DramError, pack_tiles, unpack_tiles
from tilecraft.backends.accel.isa import (
    Alu,
    AluOpcode,
    Finish,
    Gemm,
    Load,
    MemoryType,
    MicroOp,
    Store,
)
from tilecraft.backends.accel.simulator import (
    ALU_PIPELINE_CYCLES,
    GEMM_PIPELINE_CYCLES,
    BufferOverflowError,
    CycleLimitError,
    DeadlockError,
    DramRangeError,
    RaceError,
    SimulationError,
    TokenError,
    UninitializedReadError,
    UnsupportedError,
    simulate,
)
from tilecraft.backends.accel.spec import default_spec
from xdsl.utils.exceptions import DiagnosticException

DEFAULT = default_spec()
# int4 x int4 -> int16, buffers sized so the index fields still fit their words
NARROW = dataclasses.replace(
    DEFAULT,
    log_inp_width=2,
    log_wgt_width=2,
    log_acc_width=4,
    log_inp_buff_size=14,
    log_wgt_buff_size=17,
    log_acc_buff_size=16,
)
BIG = dataclasses.replace(DEFAULT, log_block=5, log_batch=1)  # BLOCK 32, BATCH 2


def load(memory_type, sram_base=0, dram_base=0, x_size=1, y_size=1, x_stride=None, **kw) -> Load:
    return Load(
        memory_type=memory_type,
        sram_base=sram_base,
        dram_base=dram_base,
        y_size=y_size,
        x_size=x_size,
        x_stride=x_size if x_stride is None else x_stride,
        **kw,
    )


def store(sram_base=0, dram_base=0, x_size=1, **kw) -> Store:
    return Store(sram_base=sram_base, dram_base=dram_base, y_size=1, x_size=x_size, x_stride=x_size, **kw)


def loop(cls, begin=0, end=1, iters=(1, 1), dst=(0, 0), src=(0, 0), wgt=(0, 0), **kw):
    fields = dict(
        uop_begin=begin,
        uop_end=end,
        iter_out=iters[0],
        iter_in=iters[1],
        dst_factor_out=dst[0],
        dst_factor_in=dst[1],
        src_factor_out=src[0],
        src_factor_in=src[1],
    )
    if cls is Gemm:
        fields.update(wgt_factor_out=wgt[0], wgt_factor_in=wgt[1])
    return cls(**fields, **kw)


def dma(nbytes, spec=DEFAULT):
    return spec.dma_latency_cycles + -(-nbytes // spec.dma_bytes_per_cycle)


def small_dram(spec=DEFAULT, tiles=128):
    """A DRAM with `tiles` zero elements of every type at element address 0, and one
    micro-op (0, 0, 0) at UOP address 0."""
    dram = Dram()
    dram.alloc(tiles * max(spec.wgt_elem_bytes, spec.acc_elem_bytes))
    dram.write(0, np.zeros(4, np.uint8))
    return dram


# -- DRAM --------------------------------------------------------------------------------------
def test_dram_alloc_grows_and_aligns():
    dram = Dram()
    a = dram.alloc(10)
    b = dram.alloc(3, align=256)
    assert (a, b % 256, dram.size >= b + 3) == (0, 0, True)
    dram.write(b, np.array([1, 2, 3], np.uint8))
    np.testing.assert_array_equal(dram.read(b, 3), [1, 2, 3])
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    at = dram.alloc(x.nbytes)
    dram.write(at, x)
    np.testing.assert_array_equal(dram.read(at, (3, 4), np.int32), x)


def test_dram_fixed_size_and_range_errors():
    dram = Dram(64)
    dram.alloc(60)
    with pytest.raises(DramError, match="out of DRAM"):
        dram.alloc(8)
    with pytest.raises(DramError, match="outside the 64-byte memory"):
        dram.write(62, np.zeros(4, np.uint8))
    with pytest.raises(DramError, match="outside"):
        dram.read(-1, 2)


@pytest.mark.parametrize("spec", [DEFAULT, NARROW, BIG], ids=["default", "int4", "block32"])
@pytest.mark.parametrize("memory_type", [MemoryType.INP, MemoryType.WGT, MemoryType.ACC, MemoryType.OUT])
def test_tiles_round_trip(spec, memory_type):
    rng = np.random.default_rng(0)
    width = {MemoryType.WGT: spec.wgt_width, MemoryType.ACC: spec.acc_width}.get(memory_type, spec.inp_width)
    shape = (spec.block, spec.block) if memory_type == MemoryType.WGT else (spec.batch, spec.block)
    values = rng.integers(-(1 << (width - 1)), 1 << (width - 1), size=(3, *shape))
    data = pack_tiles(values, memory_type, spec)
    assert data.size == 3 * int(np.prod(shape)) * width // 8
    np.testing.assert_array_equal(unpack_tiles(data, memory_type, spec), values)
    dram = Dram()
    base = dram.put_tiles(memory_type, values, spec)
    np.testing.assert_array_equal(dram.get_tiles(memory_type, base, 3, spec), values)


def test_sub_byte_packing_is_little_endian():
    """int4 values: value i at bits 4i (VTA's BitPacker): 1, -1 -> 0xF1."""
    values = np.zeros((1, 1, 16), np.int64)
    values[0, 0, :2] = [1, -1]
    assert pack_tiles(values, MemoryType.INP, NARROW)[0] == 0xF1


def test_pack_refuses_bad_tiles():
    with pytest.raises(DramError, match=r"8-bit signed, in \[-128, 127\]; got values in \[128, 128\]"):
        pack_tiles(np.full((1, 16), 128), MemoryType.INP, DEFAULT)
    with pytest.raises(DramError, match=r"end in shape \(16, 16\)"):
        pack_tiles(np.zeros((2, 16)), MemoryType.WGT, DEFAULT)
    with pytest.raises(DramError, match="hold integers"):
        pack_tiles(np.zeros((1, 16), np.float32), MemoryType.INP, DEFAULT)


# -- the cycle model -------------------------------------------------------------------------------
def test_cycles_of_a_hand_timed_stream():
    """Each cost and each wait by hand: load module INP then WGT, the compute module's
    uop load and reset in parallel, the GEMM after the load token, the STORE after it."""
    dram = small_dram()
    insns = [
        load(MemoryType.INP, x_size=2),  # 0: load module [0, 68)
        load(MemoryType.WGT, push_next=True),  # 1: [68, 164)
        load(MemoryType.UOP),  # 2: compute [0, 65)
        loop(Gemm, iters=(2, 1), dst=(1, 0), reset=True),  # 3: [65, 71)
        loop(Gemm, iters=(2, 1), dst=(1, 0), src=(1, 0), pop_prev=True, push_next=True),  # 4: [164, 170)
        store(x_size=2, pop_prev=True),  # 5: [170, 238)
    ]
    result = simulate(insns, dram, DEFAULT)
    ends = [dma(32), dma(32) + dma(256), dma(4), dma(4) + 2 + GEMM_PIPELINE_CYCLES]
    ends += [ends[1] + 2 + GEMM_PIPELINE_CYCLES, ends[1] + 2 + GEMM_PIPELINE_CYCLES + dma(32)]
    assert result.end == ends
    assert result.start == [0, ends[0], 0, ends[2], ends[1], ends[4]]
    stats = result.stats
    assert stats.cycles == ends[-1] == 238
    assert stats.modules["load"].busy_cycles == ends[1]
    assert stats.modules["compute"].token_stall_cycles == ends[1] - ends[3]
    assert stats.modules["store"].token_stall_cycles == ends[4]
    assert stats.gemm_busy_cycles == 6 and stats.macs == 2 * 256 and stats.gemm_ops == 2
    assert stats.bytes_loaded == {"inp": 32, "wgt": 256, "uop": 4}
    assert stats.bytes_stored == {"out": 32}
    assert stats.instructions == {
        "LOAD INP": 1,
        "LOAD WGT": 1,
        "LOAD UOP": 1,
        "GEMM reset": 1,
        "GEMM": 1,
        "STORE OUT": 1,
    }
    assert stats.gemm_utilization == 6 / 238
    text = result.summary()
    assert "cycles              238" in text and "GEMM utilization    2.5%" in text
    assert not result.finished


def test_alu_and_finish_costs():
    dram = small_dram()
    insns = [
        load(MemoryType.UOP),
        load(MemoryType.ACC, x_size=4),
        loop(Alu, iters=(4, 3), dst=(1, 0), alu_opcode=AluOpcode.ADD, use_imm=True, imm=1),
        Finish(),
    ]
    result = simulate(insns, dram, DEFAULT)
    alu_start = dma(4) + dma(4 * 64)
    assert result.end[2] == alu_start + 12 + ALU_PIPELINE_CYCLES
    assert result.end[3] == result.end[2] + 1 and result.finished
    assert result.stats.alu_ops == 12 and result.stats.alu_busy_cycles == 12 + ALU_PIPELINE_CYCLES


def test_full_command_queue_stalls_fetch():
    """With one-entry command queues, the third compute instruction waits for the
    second to start, and the load instruction behind it in the stream waits too."""
    spec = dataclasses.replace(DEFAULT, command_queue_depth=1)
    dram = small_dram(spec)
    insns = [load(MemoryType.ACC), load(MemoryType.ACC), load(MemoryType.ACC), load(MemoryType.INP)]
    result = simulate(insns, dram, spec)
    one = dma(64)
    assert result.start == [0, one, 2 * one, one]
    assert result.stats.fetch_stall_cycles == one
    assert result.stats.modules["load"].queue_stall_cycles == one
    deep = simulate(insns, small_dram(), DEFAULT)
    assert deep.start[3] == 0 and deep.stats.fetch_stall_cycles == 0


def test_empty_and_noop_streams():
    assert simulate([], Dram(), DEFAULT).cycles == 0
    # x_size 0: a no-op that only carries dependence flags (VTA's runtime emits these)
    noop = [load(MemoryType.INP, x_size=0, push_next=True), load(MemoryType.UOP, x_size=0, pop_prev=True)]
    result = simulate(noop, Dram(), DEFAULT)
    assert result.start == [0, 1] and result.cycles == 2 and not result.stats.bytes_loaded


# -- errors ---------------------------------------------------------------------------------------------
def raises(error, insns, spec=DEFAULT, dram=None, match=None, **kw):
    with pytest.raises(error, match=match) as info:
        simulate(insns, dram if dram is not None else small_dram(spec), spec, **kw)
    message = str(info.value)
    assert isinstance(info.value, DiagnosticException) and isinstance(info.value, SimulationError)
    assert "\n" not in message and message.startswith("accel simulator: ")
    return message


def test_deadlock_on_a_token_nobody_pushes():
    message = raises(DeadlockError, [load(MemoryType.UOP), loop(Gemm, reset=True, pop_prev=True)])
    assert "insn #1 `GEMM reset uop=[0,1)" in message
    assert "waits for token 1 on load->compute, which no instruction pushes" in message


def test_deadlock_cycle_names_each_blocked_instruction():
    insns = [
        load(MemoryType.INP, pop_next=True, push_next=True),
        load(MemoryType.UOP, pop_prev=True, push_prev=True),
    ]
    message = raises(DeadlockError, insns)
    assert "load module: insn #0 `LOAD INP" in message
    assert "waits for token 1 on compute->load, pushed by insn #1 which never runs" in message
    assert "compute module: insn #1 `LOAD UOP" in message
    assert "waits for token 1 on load->compute, pushed by insn #0 which never runs" in message


def test_deadlock_on_a_full_command_queue():
    """The compute queue (one entry) fills with instructions waiting for a token that an
    instruction behind them in the stream would push: fetch can never reach it."""
    spec = dataclasses.replace(DEFAULT, command_queue_depth=1)
    insns = [load(MemoryType.ACC, pop_prev=True), load(MemoryType.ACC), load(MemoryType.INP, push_next=True)]
    message = raises(DeadlockError, insns, spec)
    assert "compute module: insn #0" in message and "pushed by insn #2 which never runs" in message
    assert "load module: insn #2 `LOAD INP" in message
    assert "is not fetched (fetch waits at insn #1 for room in the full compute command queue, depth 1)" in message


def test_token_queue_overflow():
    """Three tokens pushed by the load module while compute is busy: the third overflows
    a two-token queue."""
    spec = dataclasses.replace(DEFAULT, token_queue_depth=2)
    insns = [load(MemoryType.ACC, x_size=64)]
    insns += [load(MemoryType.INP, push_next=True) for _ in range(3)]
    insns += [load(MemoryType.UOP, pop_prev=True) for _ in range(3)]
    message = raises(TokenError, insns, spec)
    assert "insn #3 `LOAD INP" in message
    assert f"push on load->compute at cycle {3 * dma(16)}: the queue already holds 2 tokens" in message
    simulate(insns, small_dram(), DEFAULT)  # deep enough at the default depth


def test_unmatched_token_at_the_end():
    message = raises(TokenError, [load(MemoryType.INP), load(MemoryType.WGT, push_next=True), Finish()])
    assert "insn #1 `LOAD WGT" in message
    assert "pushes a token on load->compute that no instruction pops (1 pushes, 0 pops" in message


@pytest.mark.parametrize(
    "insn,flag",
    [
        (load(MemoryType.INP, pop_prev=True), "pop_prev: the load module has no previous"),
        (load(MemoryType.WGT, push_prev=True), "push_prev: the load module has no previous"),
        (store(pop_next=True), "pop_next: the store module has no next"),
        (store(push_next=True), "push_next: the store module has no next"),
    ],
)
def test_flags_without_a_queue(insn, flag):
    raises(TokenError, [insn], match=f"insn #0 .*field {flag}")


def test_load_past_the_buffer():
    depth = DEFAULT.inp_depth
    message = raises(BufferOverflowError, [load(MemoryType.INP, sram_base=depth - 2, x_size=2, x_pad_1=1)])
    assert f"field sram_base: elements [{depth - 2}, {depth + 1})" in message
    assert f"the input buffer's depth {depth}" in message
    message = raises(BufferOverflowError, [load(MemoryType.ACC, sram_base=DEFAULT.acc_depth - 1, y_size=2)])
    assert "accumulator buffer's depth 2048" in message


def test_gemm_index_past_the_buffer():
    """The micro-op (5, 0, 0) with dst_factor_out 1000 over 3 iterations reaches 2005."""
    dram = Dram()
    uops = dram.put_uops([MicroOp(5, 0, 0)], DEFAULT)
    insns = [load(MemoryType.UOP, dram_base=uops), loop(Gemm, iters=(3, 1), dst=(1000, 0), reset=True)]
    simulate(insns, dram, DEFAULT)  # 2005 < 2048
    insns[1] = loop(Gemm, iters=(3, 1), dst=(1100, 0), reset=True)
    message = raises(BufferOverflowError, insns, dram=dram)
    assert "insn #1 `GEMM reset" in message
    assert (
        "dst index 2205 = micro-op 0 dst_idx 5 + i=2 x 1100 + j=0 x 0 is past the accumulator buffer's depth 2048"
        in (message)
    )


def test_uop_range_past_the_buffer():
    depth = DEFAULT.uop_depth
    raises(BufferOverflowError, [loop(Gemm, begin=0, end=depth + 1)], match=f"field uop_end: {depth + 1} is past")
    raises(UnsupportedError, [loop(Gemm, begin=3, end=2)], match="field uop_begin: 3 is past uop_end 2")


def test_dram_out_of_range():
    dram = Dram(1024)
    message = raises(DramRangeError, [load(MemoryType.INP, dram_base=60, x_size=2, y_size=3, x_stride=2)], dram=dram)
    assert "field dram_base: DRAM bytes [0x3c0, 0x420)" in message and "1024-byte DRAM" in message
    raises(DramRangeError, [store(dram_base=64)], dram=dram, match="pass the end of the 1024-byte DRAM")


@pytest.mark.parametrize(
    "insns,what",
    [
        ([load(MemoryType.UOP), load(MemoryType.WGT), loop(Gemm)], "reads accumulator element 0"),
        ([load(MemoryType.UOP), load(MemoryType.ACC), load(MemoryType.WGT), loop(Gemm)], "src: reads input element 0"),
        ([load(MemoryType.UOP), load(MemoryType.ACC), load(MemoryType.INP), loop(Gemm)], "wgt: reads weight element 0"),
        ([loop(Gemm, reset=True)], "uop_begin/uop_end: reads micro-op element 0"),
        ([load(MemoryType.UOP), loop(Alu, alu_opcode=AluOpcode.ADD, use_imm=True)], "dst: reads accumulator"),
        (
            [load(MemoryType.UOP), load(MemoryType.ACC), loop(Alu, src=(1, 0), iters=(2, 1), alu_opcode=AluOpcode.ADD)],
            "src: reads accumulator element 1",
        ),
        ([load(MemoryType.ACC, x_size=2), store(x_size=2)], "field sram_base: reads output element 0"),
    ],
)
def test_uninitialized_reads(insns, what):
    raises(UninitializedReadError, insns, match=what)


def test_padding_counts_as_written_and_store_reads_only_the_output_buffer():
    dram = small_dram()
    ok = [
        load(MemoryType.UOP),
        load(MemoryType.ACC, x_size=1, x_pad_0=1),  # acc 0 is padding, acc 1 loaded
        loop(Alu, iters=(2, 1), dst=(1, 0), alu_opcode=AluOpcode.ADD, use_imm=True, push_next=True),
        store(x_size=2, pop_prev=True),
    ]
    simulate(ok, dram, DEFAULT)
    # without the token the STORE starts at cycle 0, before the ALU wrote the output
    racy = [dataclasses.replace(insn, push_next=False, pop_prev=False) for insn in ok]
    raises(UninitializedReadError, racy, match="insn #3 `STORE OUT.*reads output element 0")
    # the accumulator is loaded, the output buffer is not: VTA's functional simulator
    # would store the truncated accumulator here, the hardware (and we) read the output
    raises(UninitializedReadError, [load(MemoryType.ACC), store()], match="reads output element 0")


def test_race_gemm_reads_input_still_loading():
    """No load->compute token: the GEMM starts while the input is still arriving."""
    insns = [
        load(MemoryType.WGT),
        load(MemoryType.INP, x_size=64),  # [96, 288)
        load(MemoryType.UOP),
        load(MemoryType.ACC),
        loop(Gemm),  # [137, 142)
    ]
    message = raises(RaceError, insns)
    assert "insn #4 `GEMM uop=[0,1)" in message
    assert f"src: reads input element 0 at cycle {dma(4) + dma(64)} while insn #1 `LOAD INP" in message
    until = dma(256) + dma(64 * 16)
    assert f"is still writing it (until cycle {until}): a dependence token between them is missing" in message
    ok = [insns[0], dataclasses.replace(insns[1], push_next=True), *insns[2:4], loop(Gemm, pop_prev=True)]
    assert simulate(ok, small_dram(), DEFAULT).start[4] == until


def test_race_load_overwrites_input_still_read():
    """The second LOAD INP does not wait (pop_next) for the GEMM reading the first."""
    insns = [
        load(MemoryType.UOP),
        load(MemoryType.ACC),
        load(MemoryType.INP),
        load(MemoryType.WGT, push_next=True),
        loop(Gemm, iters=(1000, 1), pop_prev=True),
        load(MemoryType.INP),
    ]
    message = raises(RaceError, insns)
    assert "insn #5 `LOAD INP" in message and "field sram_base: writes input element 0" in message
    assert "while insn #4 `GEMM" in message and "is still reading it" in message


def test_race_store_reads_output_still_written():
    """ALU 2 rewrites the output that STORE 1 is still reading (no store->compute token);
    with that token, STORE 2 (no compute->store token) reads what ALU 2 is writing."""
    insns = [
        load(MemoryType.UOP),
        load(MemoryType.ACC),
        loop(Alu, alu_opcode=AluOpcode.ADD, use_imm=True, push_next=True),
        store(pop_prev=True),
        loop(Alu, iters=(500, 1), alu_opcode=AluOpcode.ADD, use_imm=True),
        store(),
    ]
    message = raises(RaceError, insns)
    assert "insn #4 `ALU ADD imm=0" in message and "dst: writes output element 0" in message
    assert "while insn #3 `STORE OUT" in message and "is still reading it" in message
    insns[3] = dataclasses.replace(insns[3], push_prev=True)
    insns[4] = dataclasses.replace(insns[4], pop_next=True)
    message = raises(RaceError, insns)
    assert "insn #5 `STORE OUT" in message and "field sram_base: reads output element 0" in message
    assert "while insn #4 `ALU ADD imm=0" in message and "is still writing it" in message


@pytest.mark.parametrize(
    "insn,match",
    [
        (load(MemoryType.OUT), "field memory_type: LOAD of OUT is not supported"),
        (Store(memory_type=MemoryType.ACC, sram_base=0, dram_base=0, y_size=1, x_size=1, x_stride=1), "STORE of ACC"),
        (Store(sram_base=0, dram_base=0, y_size=1, x_size=1, x_stride=1, x_pad_0=1), "x_pad_0: STORE does not pad"),
        ("not an instruction", "is not an accelerator instruction"),
        (load(7), "field memory_type: 7 is not a valid MemoryType"),
        (loop(Alu, alu_opcode=6), "field alu_opcode: 6 is not a valid AluOpcode"),
    ],
)
def test_unsupported(insn, match):
    raises(UnsupportedError, [insn], match=match)


def test_finish_must_end_the_stream():
    raises(UnsupportedError, [Finish(), load(MemoryType.INP)], match="insn #0 `FINISH`: FINISH ends the stream, but 1")


def test_fields_that_do_not_encode():
    insn = loop(Alu, alu_opcode=AluOpcode.ADD, use_imm=True, imm=1 << 20)
    raises(SimulationError, [insn], match="does not encode at this spec: ALU field imm: 1048576 does not fit")


def test_max_cycles():
    raises(CycleLimitError, [load(MemoryType.INP)], max_cycles=10, match="runs 66 cycles, past max_cycles 10")
    # the default guard stops a loop of 2^27 x 2^13 steps before simulating any of it
    huge = [load(MemoryType.UOP), loop(Gemm, 0, 8192, iters=(16383, 16383), reset=True)]
    raises(CycleLimitError, huge, match="past max_cycles 1000000000")


def test_loops_longer_than_one_chunk():
    """90,000 GEMM steps (two chunks) all into acc[0]: sum over i, j of inp[i] . wgt[j]^T;
    then 70,000 ALU steps adding 1 to acc[0] (one destination: run in order)."""
    rng = np.random.default_rng(5)
    inp = rng.integers(-128, 128, size=(300, 1, 16))
    wgt = rng.integers(-128, 128, size=(300, 16, 16))
    dram = Dram()
    bases = [
        dram.put_uops([MicroOp(0, 0, 0)], DEFAULT),
        dram.put_tiles(MemoryType.INP, inp, DEFAULT),
        dram.put_tiles(MemoryType.WGT, wgt, DEFAULT),
    ]
    insns = [
        load(MemoryType.UOP, dram_base=bases[0]),
        load(MemoryType.INP, dram_base=bases[1], x_size=300),
        load(MemoryType.WGT, dram_base=bases[2], x_size=300, push_next=True),
        loop(Gemm, reset=True),
        loop(Gemm, iters=(300, 300), src=(1, 0), wgt=(0, 1), pop_prev=True),
        loop(Alu, iters=(700, 100), alu_opcode=AluOpcode.ADD, use_imm=True, imm=1),
    ]
    result = simulate(insns, dram, DEFAULT)
    expected = (np.einsum("bk,ok->bo", inp.sum(axis=0), wgt.sum(axis=0)) + 70_000 + 2**31) % 2**32 - 2**31
    np.testing.assert_array_equal(result.buffers.acc[0], expected)
    assert result.stats.macs == 90_000 * 256 and result.stats.alu_ops == 70_000


# -- semantics against a step-by-step reference ----------------------------------------------------------
def wrap(value: int, width: int) -> int:
    half = 1 << (width - 1)
    return (value + half) % (2 * half) - half


def reference_alu(op: AluOpcode, a: int, b: int, width: int) -> int:
    """VTA's ALU on Python integers (no overflow) then wrapped: a shift by any amount
    (past 64 bits, where the wrapped result no longer changes, the amount is capped)."""
    if op == AluOpcode.SHR:
        result = a >> min(b, 64) if b >= 0 else a << min(-b, 64)
    else:
        result = {AluOpcode.MIN: min, AluOpcode.MAX: max}.get(op, None)
        result = result(a, b) if result else (a + b if op == AluOpcode.ADD else a * b)
    return wrap(result, width)


def reference_run(spec, acc, inp, wgt, uops, insn):
    """One GEMM or ALU, step by step in VTA's order, on int64 arrays (acc updated)."""
    steps = []
    for i in range(insn.iter_out):
        for j in range(insn.iter_in):
            for k in range(insn.uop_begin, insn.uop_end):
                u = uops[k]
                steps.append(
                    (
                        u.dst_idx + i * insn.dst_factor_out + j * insn.dst_factor_in,
                        u.src_idx + i * insn.src_factor_out + j * insn.src_factor_in,
                        u.wgt_idx + i * getattr(insn, "wgt_factor_out", 0) + j * getattr(insn, "wgt_factor_in", 0),
                    )
                )
    for d, s, w in steps:
        if isinstance(insn, Gemm):
            if insn.reset:
                acc[d] = 0
            else:
                product = np.einsum("bk,ok->bo", inp[s], wgt[w])
                acc[d] = [[wrap(int(v), spec.acc_width) for v in row] for row in acc[d] + product]
        else:
            b = acc[s] if not insn.use_imm else np.full_like(acc[d], insn.imm)
            acc[d] = [
                [reference_alu(insn.alu_opcode, int(x), int(y), spec.acc_width) for x, y in zip(r1, r2)]
                for r1, r2 in zip(acc[d], b)
            ]


@st.composite
def programs(draw):
    spec = draw(st.sampled_from([DEFAULT, NARROW, BIG]))
    uops = draw(st.lists(st.tuples(*[st.integers(0, 3)] * 3), min_size=1, max_size=4))
    iters = (draw(st.integers(1, 3)), draw(st.integers(0, 3)))
    factors = {name: (draw(st.integers(0, 3)), draw(st.integers(0, 3))) for name in ("dst", "src", "wgt")}
    gemm_reset = draw(st.booleans())
    alu_op = draw(st.sampled_from(list(AluOpcode)))
    alu_imm = draw(st.one_of(st.none(), st.integers(-40, 40)))
    alu_factors = {name: (draw(st.integers(0, 2)), draw(st.integers(0, 2))) for name in ("dst", "src")}
    seed = draw(st.integers(0, 2**16))
    return spec, uops, iters, factors, gemm_reset, alu_op, alu_imm, alu_factors, seed


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_gemm_and_alu_programs_match_the_reference(program):
    """Random micro-op kernels, loop factors (repeated destinations, steps reading earlier
    steps' results), ALU ops and shifts past the width, at int8/int32, int4/int16 and
    BLOCK-32 specs: the final accumulator and the stored output match step by step."""
    spec, raw_uops, iters, factors, gemm_reset, alu_op, alu_imm, alu_factors, seed = program
    rng = np.random.default_rng(seed)
    uops = [MicroOp(*u) for u in raw_uops]

    def span(field, f):  # the largest index of a micro-op field with loop factors f
        return max(getattr(u, field) for u in uops) + (iters[0] - 1) * f[0] + max(iters[1] - 1, 0) * f[1]

    n_acc = (
        max(span("dst_idx", factors["dst"]), span("dst_idx", alu_factors["dst"]), span("src_idx", alu_factors["src"]))
        + 1
    )
    n_inp = span("src_idx", factors["src"]) + 1
    n_wgt = span("wgt_idx", factors["wgt"]) + 1

    def values(width, shape):
        return rng.integers(-(1 << (width - 1)), 1 << (width - 1), size=shape)

    batch, block = spec.batch, spec.block
    acc = values(spec.acc_width, (n_acc, batch, block))
    inp = values(spec.inp_width, (n_inp, batch, block))
    wgt = values(spec.wgt_width, (n_wgt, block, block))
    dram = Dram()
    bases = {
        MemoryType.UOP: dram.put_uops(uops, spec),
        MemoryType.ACC: dram.put_tiles(MemoryType.ACC, acc, spec),
        MemoryType.INP: dram.put_tiles(MemoryType.INP, inp, spec),
        MemoryType.WGT: dram.put_tiles(MemoryType.WGT, wgt, spec),
    }
    out_base = dram.alloc_tiles(MemoryType.OUT, n_acc, spec)
    counts = {MemoryType.UOP: len(uops), MemoryType.ACC: n_acc, MemoryType.INP: n_inp, MemoryType.WGT: n_wgt}
    gemm = loop(Gemm, 0, len(uops), iters, factors["dst"], factors["src"], factors["wgt"], reset=gemm_reset)
    alu_insn = loop(
        Alu,
        0,
        len(uops),
        iters,
        alu_factors["dst"],
        alu_factors["src"],
        alu_opcode=alu_op,
        use_imm=alu_imm is not None,
        imm=alu_imm or 0,
    )
    # copy every accumulator element to the output buffer at the end: ADD 0 over all
    copy_uop = dram.put_uops([MicroOp(0, 0)], spec)
    insns = [load(t, dram_base=bases[t], x_size=counts[t]) for t in bases]
    insns += [
        load(MemoryType.UOP, sram_base=len(uops), dram_base=copy_uop),
        gemm,
        alu_insn,
        loop(Alu, len(uops), len(uops) + 1, (n_acc, 1), (1, 0), alu_opcode=AluOpcode.ADD, use_imm=True),
        store(x_size=n_acc, dram_base=out_base),
    ]
    # the GEMM waits for the input and weight loads, the store for the last ALU
    insns[3] = dataclasses.replace(insns[3], push_next=True)
    insns[5] = dataclasses.replace(insns[5], pop_prev=True)
    insns[-2] = dataclasses.replace(insns[-2], push_next=True)
    insns[-1] = dataclasses.replace(insns[-1], pop_prev=True)
    result = simulate(insns, dram, spec)

    expected = acc.copy()
    reference_run(spec, expected, inp, wgt, uops, gemm)
    reference_run(spec, expected, inp, wgt, uops, alu_insn)
    np.testing.assert_array_equal(result.buffers.acc[:n_acc], expected)
    out = dram.get_tiles(MemoryType.OUT, out_base, n_acc, spec)
    np.testing.assert_array_equal(out, [[[wrap(int(v), spec.out_width) for v in r] for r in t] for t in expected])


def test_alu_steps_that_read_earlier_steps_run_in_order():
    """acc[i + 1] += acc[i] for i < 7 is a prefix sum (each step reads the previous
    result); acc[0] = max(acc[0], acc[i]) repeats one destination."""
    dram = Dram()
    a = np.arange(1, 9, dtype=np.int64)[:, None, None] * np.ones((1, 1, 16), np.int64)
    base = dram.put_tiles(MemoryType.ACC, a, DEFAULT)
    uops = dram.put_uops([MicroOp(1, 0), MicroOp(0, 1)], DEFAULT)
    insns = [
        load(MemoryType.UOP, dram_base=uops, x_size=2),
        load(MemoryType.ACC, dram_base=base, x_size=8),
        loop(Alu, 0, 1, (7, 1), (1, 0), (1, 0), alu_opcode=AluOpcode.ADD),
    ]
    result = simulate(insns, dram, DEFAULT)
    np.testing.assert_array_equal(result.buffers.acc[:8, 0, 0], np.cumsum(np.arange(1, 9)))
    insns[2] = loop(Alu, 1, 2, (7, 1), (0, 0), (1, 0), alu_opcode=AluOpcode.MAX)  # acc[0] = max over acc[1..7]
    result = simulate(insns, dram, DEFAULT)
    assert result.buffers.acc[0, 0, 0] == 8


def test_gemm_wraps_at_the_accumulator_width():
    """int4 x int4 into an int16 accumulator: 16 x (-8 x -8) + 32760 wraps."""
    spec = NARROW
    dram = Dram()
    acc = np.full((1, 1, 16), 32760, np.int64)
    bases = [
        dram.put_uops([MicroOp(0, 0, 0)], spec),
        dram.put_tiles(MemoryType.ACC, acc, spec),
        dram.put_tiles(MemoryType.INP, np.full((1, 1, 16), -8), spec),
        dram.put_tiles(MemoryType.WGT, np.full((1, 16, 16), -8), spec),
    ]
    insns = [
        load(t, dram_base=b) for t, b in zip((MemoryType.UOP, MemoryType.ACC, MemoryType.INP, MemoryType.WGT), bases)
    ]
    insns[3] = dataclasses.replace(insns[3], push_next=True)  # the weights are in
    insns.append(loop(Gemm, pop_prev=True))
    result = simulate(insns, dram, spec)
    assert result.buffers.acc[0, 0, 0] == wrap(32760 + 16 * 64, 16)
    assert result.buffers.out[0, 0, 0] == wrap(32760 + 16 * 64, 4)


def test_acc_8bit_load_sign_extends():
    dram = Dram()
    values = np.array([[[-128, 127] + [0] * 14]], np.int8)
    base = dram.put_tiles(MemoryType.INP, values, DEFAULT)  # ACC_8BIT elements are laid out as INP
    result = simulate([load(MemoryType.ACC_8BIT, dram_base=base)], dram, DEFAULT)
    assert list(result.buffers.acc[0, 0, :3]) == [-128, 127, 0]
    assert result.stats.bytes_loaded == {"acc_8bit": 16}
