"""Dependence tokens from buffer footprints (backends/accel/dependences.py): RAW and
WAR between the load, compute and store modules, the double-buffered pattern that
hides load latency, the serial ablation, and FIFO pairing of pushes and pops."""

from __future__ import annotations

import pytest

from tilecraft.backends.accel.dependences import DependenceError, footprints, insert_dependences, module_of
from tilecraft.backends.accel.isa import Alu, AluOpcode, Finish, Gemm, Load, MemoryType, MicroOp, Store
from tilecraft.backends.accel.spec import default_spec

SPEC = default_spec()
# the micro-ops in DRAM at base 0: step t reads inp[t], wgt[t] and writes acc[t]
UOPS = {0: [MicroOp(0, 0, 0), MicroOp(1, 1, 1)]}


def read_uops(base, count):
    return UOPS[base][:count]


def load(kind, sram, rows=1):
    return Load(memory_type=kind, sram_base=sram, dram_base=0, y_size=rows, x_size=1, x_stride=1)


def gemm_at(t):
    """One GEMM step with micro-op t: acc[t] += inp[t] x wgt[t]."""
    return Gemm(uop_begin=t, uop_end=t + 1, iter_out=1, iter_in=1, dst_factor_out=0, dst_factor_in=0,
                src_factor_out=0, src_factor_in=0, wgt_factor_out=0, wgt_factor_in=0)


def store(sram):
    return Store(sram_base=sram, dram_base=0, y_size=1, x_size=1, x_stride=1)


def flags(insn):
    return "".join(c for c, f in zip("PpUu", (insn.pop_prev, insn.pop_next, insn.push_prev, insn.push_next)) if f)


def test_one_tile_orders_load_compute_store():
    stream = [load(MemoryType.UOP, 0), load(MemoryType.INP, 0), load(MemoryType.WGT, 0),
              gemm_at(0), store(0), Finish()]  # fmt: skip
    out = insert_dependences(stream, read_uops, SPEC)
    assert [module_of(i) for i in out] == ["compute", "load", "load", "compute", "store", "compute"]
    # the wgt load (the later of the two the GEMM reads) pushes; the GEMM pops it and
    # pushes to store; FINISH waits for the store
    assert [flags(i) for i in out] == ["", "", "u", "Pu", "PU", "p"]


def test_double_buffering_lets_loads_run_ahead():
    # two threads: inputs at 0 and 1, weights at 0 and 1, accumulators 0 and 1
    stream = [load(MemoryType.UOP, 0, 2)]
    for _ in range(2):  # two reduction steps
        stream += [load(MemoryType.INP, 0), load(MemoryType.WGT, 0), load(MemoryType.INP, 1), load(MemoryType.WGT, 1)]
        stream += [gemm_at(0), gemm_at(1)]
    out = insert_dependences(stream, read_uops, SPEC)
    got = [flags(i) for i in out]
    # step 1: gemm0 waits for its weight (index 2), gemm1 for thread 1's (index 4);
    # step 2: the reload of inp/wgt 0 waits for gemm0 (WAR), not for gemm1
    assert got[:7] == ["", "", "u", "", "u", "PU", "PU"]
    assert got[7] == "p" and out[5].push_prev  # load inp 0 again after gemm0 released it
    assert got[9] == "p" and out[6].push_prev  # thread 1's reload waits for gemm1 only
    pushes = sum(i.push_next for i in out if module_of(i) == "load")
    pops = sum(i.pop_prev for i in out if module_of(i) == "compute")
    assert pushes == pops


def test_serial_makes_modules_take_turns():
    stream = [load(MemoryType.UOP, 0, 2)]
    for t in range(2):
        stream += [load(MemoryType.INP, t), load(MemoryType.WGT, t), gemm_at(t)]
    independent = insert_dependences(stream, read_uops, SPEC)
    serial = insert_dependences(stream, read_uops, SPEC, serial=True)
    # independent: thread 1's loads do not wait for gemm 0; serial: they do
    assert not independent[4].pop_next
    assert serial[4].pop_next and serial[3].push_prev


def test_alu_on_accumulator_then_store_then_reuse():
    stream = [load(MemoryType.UOP, 0, 2), load(MemoryType.INP, 0), load(MemoryType.WGT, 0), gemm_at(0),
              Alu(uop_begin=0, uop_end=1, iter_out=1, iter_in=1, dst_factor_out=0, dst_factor_in=0,
                  src_factor_out=0, src_factor_in=0, alu_opcode=AluOpcode.SHR, use_imm=True, imm=3),
              store(0), gemm_at(0), store(0), Finish()]  # fmt: skip
    out = insert_dependences(stream, read_uops, SPEC)
    got = [flags(i) for i in out]
    assert got[4] == "u"  # the ALU result is what the store reads
    assert got[5] == "PU"  # the store waits for the ALU and releases the output buffer
    assert got[6] == "pu"  # the second GEMM rewrites out[0]: WAR after the first store
    assert got[7] == "PU" and got[8] == "p"


def test_footprints_follow_the_uop_buffer():
    UOPS[4] = [MicroOp(3, 5, 7)]
    stream = [Load(memory_type=MemoryType.UOP, sram_base=2, dram_base=4, y_size=1, x_size=1, x_stride=1),
              Gemm(uop_begin=2, uop_end=3, iter_out=4, iter_in=2, dst_factor_out=10, dst_factor_in=1,
                   src_factor_out=20, src_factor_in=2, wgt_factor_out=0, wgt_factor_in=1)]  # fmt: skip
    fp = footprints(stream, read_uops, SPEC)[1]
    reads = {r.buffer: (r.start, r.stop) for r in fp.reads}
    assert reads["inp"] == (5, 5 + 3 * 20 + 1 * 2 + 1)
    assert reads["wgt"] == (7, 9)
    assert reads["acc"] == (3, 3 + 30 + 1 + 1)
    assert {w.buffer for w in fp.writes} == {"acc", "out"}


def test_a_load_store_hazard_without_compute_is_refused():
    # stores read the output buffer and loads write others, so only a malformed
    # stream (a STORE from the input buffer) makes one: it is refused, not ignored
    stream = [load(MemoryType.INP, 0), Store(memory_type=MemoryType.INP, sram_base=0, dram_base=0, y_size=1,
                                              x_size=1, x_stride=1)]
    with pytest.raises(DependenceError, match="no queue joins the load and store modules"):
        insert_dependences(stream, read_uops, SPEC)
