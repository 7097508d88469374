"""The seven scenarios of VTA's instruction unit tests (tvm vta/tests/python/unittest/
test_vta_insn.py), as hand-written instruction streams on the simulator, bit-exact
against numpy integer arithmetic: runtime array, save/load of outputs, padded load,
GEMM without and with two virtual threads, ALU ops with immediate and tensor operands,
relu, shift and scale. Each runs at VTA's default spec and at a BLOCK-32 / BATCH-2 one.

The GEMM streams are written the way VTA's compiler emits them: loads and GEMMs in
separate modules, the load module's push_next / the GEMM's pop_prev ordering each
loaded tile before its use, and the GEMM's push_prev / the next load's pop_next
releasing the buffer region (the pipelined token pattern). With two virtual threads
each thread has its own input/weight/accumulator regions, so one thread's loads run
while the other computes: the cycle tests check that this is faster and that a
GEMM-bound stream keeps the GEMM core near its ideal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tilecraft.backends.accel.dram import Dram
from tilecraft.backends.accel.isa import (
    Alu,
    AluOpcode,
    Finish,
    Gemm,
    Instruction,
    Load,
    MemoryType,
    MicroOp,
    Store,
    encode_stream,
)
from tilecraft.backends.accel.simulator import (
    GEMM_PIPELINE_CYCLES,
    simulate,
    simulate_stream,
)
from tilecraft.backends.accel.spec import AccelSpec, default_spec

DEFAULT = default_spec()
# BLOCK 32, BATCH 2; the accumulator made large enough for the padded-load scenario.
BIG = dataclasses.replace(DEFAULT, log_block=5, log_batch=1, log_acc_buff_size=19)
SPECS = pytest.mark.parametrize("spec", [DEFAULT, BIG], ids=["default", "block32-batch2"])


def out_max(spec: AccelSpec) -> int:
    return (1 << (spec.inp_width - 1)) - 1


def to_out(values: np.ndarray, spec: AccelSpec) -> np.ndarray:
    """numpy's astype to the output width: the low bits, sign-extended."""
    half = 1 << (spec.out_width - 1)
    return (values.astype(np.int64) + half) % (2 * half) - half


def alu(op: AluOpcode, count: int, uop: int, imm: int | None = None, **flags) -> Alu:
    """An ALU over `count` consecutive accumulator elements from micro-op `uop`'s indices."""
    return Alu(
        alu_opcode=op,
        use_imm=imm is not None,
        imm=imm or 0,
        uop_begin=uop,
        uop_end=uop + 1,
        iter_out=count,
        iter_in=1,
        dst_factor_out=1,
        dst_factor_in=0,
        src_factor_out=1,
        src_factor_in=0,
        **flags,
    )


def acc_program(spec, operands: list[np.ndarray], ops: list[tuple[AluOpcode, int | None]], pads=(0, 0, 0, 0)):
    """VTA's ALU scenarios: load each operand (rows, cols, BATCH, BLOCK) int32 into the
    accumulator (the first with `pads` = (y_pad_0, y_pad_1, x_pad_0, x_pad_1)), run `ops`
    on the first (tensor operands read the second), store it as int8; returns DRAM out."""
    dram = Dram()
    rows, cols = operands[0].shape[:2]
    y0, y1, x0, x1 = pads
    count = (rows + y0 + y1) * (cols + x0 + x1)
    uop_base = dram.put_uops([MicroOp(0, count)], spec)
    out_base = dram.alloc_tiles(MemoryType.OUT, count, spec)
    insns: list[Instruction] = [
        Load(memory_type=MemoryType.UOP, sram_base=0, dram_base=uop_base, y_size=1, x_size=1, x_stride=1)
    ]
    for number, operand in enumerate(operands):
        base = dram.put_tiles(MemoryType.ACC, operand, spec)
        padding = dict(y_pad_0=y0, y_pad_1=y1, x_pad_0=x0, x_pad_1=x1) if number == 0 else {}
        insns.append(
            Load(
                memory_type=MemoryType.ACC,
                sram_base=number * count,
                dram_base=base,
                y_size=rows,
                x_size=cols,
                x_stride=cols,
                **padding,
            )
        )
    for number, (op, imm) in enumerate(ops):
        insns.append(alu(op, count, 0, imm, push_next=number == len(ops) - 1))
    insns += [
        Store(sram_base=0, dram_base=out_base, y_size=1, x_size=count, x_stride=count, pop_prev=True, push_prev=True),
        Finish(pop_next=True),
    ]
    result = simulate(insns, dram, spec)
    assert result.finished
    out = dram.get_tiles(MemoryType.OUT, out_base, count, spec)
    return out.reshape(rows + y0 + y1, cols + x0 + x1, spec.batch, spec.block), result


def random_acc(rng, low, high, shape, spec):
    return rng.integers(low, high, size=(*shape, spec.batch, spec.block)).astype(np.int32)


# -- 1. runtime array ---------------------------------------------------------------------
@SPECS
def test_runtime_array(spec):
    """An int8 array of tiles goes into DRAM and comes back unchanged (`tvm.nd.array`)."""
    rng = np.random.default_rng(1)
    x = rng.integers(1, 10, size=(100, 100, spec.batch, spec.block)).astype(np.int8)
    dram = Dram()
    base = dram.put_tiles(MemoryType.INP, x, spec)
    back = dram.get_tiles(MemoryType.INP, base, 100 * 100, spec).reshape(x.shape)
    np.testing.assert_array_equal(back, x)
    raw = dram.read(base * spec.inp_elem_bytes, x.shape, np.int8)  # the layout is plain int8 C order
    np.testing.assert_array_equal(raw, x)


# -- 2. save/load of outputs -----------------------------------------------------------------
@SPECS
def test_save_load_out(spec):
    """LOAD ACC, a no-op ALU (x >> 0) that writes the output buffer, STORE as int8."""
    rng = np.random.default_rng(2)
    x = random_acc(rng, 1, 10, (6, 6), spec)
    out, result = acc_program(spec, [x], [(AluOpcode.SHR, 0)])
    np.testing.assert_array_equal(out, x.astype(np.int8))
    assert result.stats.bytes_loaded["acc"] == x.size * 4
    assert result.stats.bytes_stored["out"] == x.size


# -- 3. padded load ------------------------------------------------------------------------------
@SPECS
def test_padded_load(spec):
    """A LOAD with padding: pad_before (0, 1), pad_after (1, 3) around a 21 x 20 tile grid."""
    rng = np.random.default_rng(3)
    n, m = 21, 20
    x = random_acc(rng, 1, 2, (n, m), spec)
    out, result = acc_program(spec, [x], [(AluOpcode.SHR, 0)], pads=(0, 1, 1, 3))
    expected = np.zeros((n + 1, m + 4, spec.batch, spec.block), np.int8)
    expected[0:n, 1 : 1 + m] = x
    np.testing.assert_array_equal(out, expected)
    # the padding costs load cycles (written at the DMA rate) but moves no DRAM bytes
    assert result.stats.bytes_loaded["acc"] == x.size * 4
    padded_bytes = (n + 1) * (m + 4) * spec.acc_elem_bytes
    load_acc = 1  # after the uop load
    assert result.end[load_acc] - result.start[load_acc] == spec.dma_latency_cycles + -(
        -padded_bytes // spec.dma_bytes_per_cycle
    )


# -- 4, 5. GEMM without and with two virtual threads ---------------------------------------------
def gemm_stream(spec: AccelSpec, dram: Dram, x, w, threads: int, serial: bool = False, shift: int = 8):
    """y = clip((sum over ko of x[:, ko] . w[:, ko]^T) >> shift, 0, out max) as int8, with
    x (o, n, BATCH, BLOCK) and w (m, n, BLOCK, BLOCK); the o rows split among `threads`
    virtual threads. `serial` is the ablation: the same instructions, but every load
    waits for the GEMM before it, whichever thread it belongs to. Returns (instructions,
    DRAM element address of y)."""
    o, n = x.shape[:2]
    m = w.shape[0]
    rows = o // threads  # rows of one thread
    x_base = dram.put_tiles(MemoryType.INP, x, spec)
    w_base = dram.put_tiles(MemoryType.WGT, w, spec)
    # micro-op t: thread t's GEMM origin; threads + t: its ALU origin
    uops = [MicroOp(t * rows * m, t * rows, t * m) for t in range(threads)]
    uops += [MicroOp(t * rows * m, 0) for t in range(threads)]
    uop_base = dram.put_uops(uops, spec)
    y_base = dram.alloc_tiles(MemoryType.OUT, o * m, spec)

    def gemm(t: int, **flags) -> Gemm:
        # acc[t*rows*m + i*m + j] (+)= inp[t*rows + i] . wgt[t*m + j]
        return Gemm(
            uop_begin=t,
            uop_end=t + 1,
            iter_out=rows,
            iter_in=m,
            dst_factor_out=m,
            dst_factor_in=1,
            src_factor_out=0 if flags.get("reset") else 1,
            src_factor_in=0,
            wgt_factor_out=0,
            wgt_factor_in=0 if flags.get("reset") else 1,
            **flags,
        )

    insns: list[Instruction] = [
        Load(memory_type=MemoryType.UOP, sram_base=0, dram_base=uop_base, y_size=1, x_size=len(uops), x_stride=1)
    ]
    insns += [gemm(t, reset=True) for t in range(threads)]
    for ko in range(n):
        for t in range(threads):
            insns.append(
                Load(
                    memory_type=MemoryType.INP,
                    sram_base=t * rows,
                    dram_base=x_base + t * rows * n + ko,
                    y_size=rows,
                    x_size=1,
                    x_stride=n,
                    # wait until this thread's GEMM of ko - 1 (serial: the GEMM before) is done
                    pop_next=ko > 0 or (serial and t > 0),
                )
            )
            insns.append(
                Load(
                    memory_type=MemoryType.WGT,
                    sram_base=t * m,
                    dram_base=w_base + ko,
                    y_size=m,
                    x_size=1,
                    x_stride=n,
                    push_next=True,  # this thread's tiles of ko are in
                )
            )
        for t in range(threads):
            last = ko == n - 1 and (t == threads - 1 or not serial)
            insns.append(gemm(t, pop_prev=True, push_prev=not last))
    for t in range(threads):
        insns.append(alu(AluOpcode.SHR, rows * m, threads + t, shift))
        insns.append(alu(AluOpcode.MAX, rows * m, threads + t, 0))
        insns.append(alu(AluOpcode.MIN, rows * m, threads + t, out_max(spec), push_next=True))
        insns.append(
            Store(
                sram_base=t * rows * m,
                dram_base=y_base + t * rows * m,
                y_size=1,
                x_size=rows * m,
                x_stride=rows * m,
                pop_prev=True,
                push_prev=t == threads - 1,
            )
        )
    insns.append(Finish(pop_next=True))
    return insns, y_base


def gemm_reference(x, w, spec, shift=8):
    acc = np.einsum("onbk,mnck->ombc", x.astype(np.int64), w.astype(np.int64))
    acc = to_out(acc, dataclasses.replace(spec, log_inp_width=spec.log_acc_width))  # int32 wraparound
    return np.clip(acc >> shift, 0, out_max(spec)).astype(np.int8)


def run_gemm(spec, o, n, m, threads, serial=False, seed=4):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=(o, n, spec.batch, spec.block)).astype(np.int8)
    w = rng.integers(-128, 128, size=(m, n, spec.block, spec.block)).astype(np.int8)
    dram = Dram()
    insns, y_base = gemm_stream(spec, dram, x, w, threads, serial)
    result = simulate(insns, dram, spec)
    y = dram.get_tiles(MemoryType.OUT, y_base, o * m, spec).reshape(o, m, spec.batch, spec.block)
    np.testing.assert_array_equal(y, gemm_reference(x, w, spec))
    assert result.stats.macs == o * n * m * spec.macs_per_cycle
    return result, insns


@SPECS
@pytest.mark.parametrize("n", [1, 3])
def test_gemm(spec, n):
    """VTA's default schedule: one thread, x and w loaded per reduction step ko."""
    run_gemm(spec, o=4, n=n, m=4, threads=1)


@SPECS
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("serial", [False, True], ids=["pipelined", "serial"])
def test_gemm_two_virtual_threads(spec, n, serial):
    """VTA's smt schedule: the rows split over two virtual threads (cthread)."""
    result, insns = run_gemm(spec, o=4, n=n, m=4, threads=2, serial=serial)
    # same result through the binary stream
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, size=(4, n, spec.batch, spec.block)).astype(np.int8)
    w = rng.integers(-128, 128, size=(4, n, spec.block, spec.block)).astype(np.int8)
    dram = Dram()
    insns, y_base = gemm_stream(spec, dram, x, w, threads=2, serial=serial)
    again = simulate_stream(encode_stream(insns, spec), dram, spec)
    assert again.start == result.start and again.cycles == result.cycles
    y = dram.get_tiles(MemoryType.OUT, y_base, 16, spec).reshape(4, 4, spec.batch, spec.block)
    np.testing.assert_array_equal(y, gemm_reference(x, w, spec))


def test_two_virtual_threads_hide_load_latency():
    """The double-buffered (two-thread) stream computes the same in fewer cycles than the
    same instructions serialized: one thread's loads overlap the other's GEMM."""
    serial, _ = run_gemm(DEFAULT, o=32, n=8, m=8, threads=2, serial=True)
    piped, _ = run_gemm(DEFAULT, o=32, n=8, m=8, threads=2)
    assert piped.cycles < serial.cycles
    assert piped.stats.gemm_utilization > serial.stats.gemm_utilization
    # serialized: the compute module waits on the load module every step
    assert serial.stats.modules["compute"].token_stall_cycles > piped.stats.modules["compute"].token_stall_cycles
    print("serialized", serial.cycles, "two threads", piped.cycles)


def test_gemm_bound_stream_is_near_ideal():
    """Long GEMMs behind double-buffered loads: after the first loads the GEMM core never
    waits, and GEMM cycles are the ideal MAC cycles plus the pipeline fill per GEMM."""
    o, n, m = 128, 32, 16  # a thread's GEMM (64 x 16 steps) outlasts its loads (1 KiB + 4 KiB)
    result, insns = run_gemm(DEFAULT, o=o, n=n, m=m, threads=2)
    stats = result.stats
    gemms = sum(1 for i in insns if isinstance(i, Gemm) and not i.reset)
    assert stats.gemm_busy_cycles == stats.ideal_gemm_cycles + gemms * GEMM_PIPELINE_CYCLES
    assert stats.gemm_busy_cycles <= 1.01 * stats.ideal_gemm_cycles
    first_gemm = next(k for k, i in enumerate(insns) if isinstance(i, Gemm) and not i.reset)
    last_gemm = max(k for k, i in enumerate(insns) if isinstance(i, Gemm) and not i.reset)
    # from the first to the last GEMM the core is busy all the time
    span = result.end[last_gemm] - result.start[first_gemm]
    assert span == stats.gemm_busy_cycles
    assert stats.gemm_utilization > 0.8


# -- 6. ALU with immediate and tensor operands --------------------------------------------------------
ALU_CASES = [
    # (name, opcode, imm or None (tensor), numpy meaning)
    ("shl_imm", AluOpcode.SHR, "neg", lambda a, b: np.left_shift(a, b)),
    ("max_imm", AluOpcode.MAX, "imm", np.maximum),
    ("max", AluOpcode.MAX, None, np.maximum),
    ("add_imm", AluOpcode.ADD, "imm", np.add),
    ("add", AluOpcode.ADD, None, np.add),
    ("shr_imm", AluOpcode.SHR, "imm", np.right_shift),
    ("min", AluOpcode.MIN, None, np.minimum),
    ("mul_imm", AluOpcode.MUL, "imm", np.multiply),
    ("mul", AluOpcode.MUL, None, np.multiply),
]


@SPECS
@pytest.mark.parametrize("name,opcode,kind,meaning", ALU_CASES, ids=[c[0] for c in ALU_CASES])
def test_alu(spec, name, opcode, kind, meaning):
    """acc = op(a, imm) or op(a, b) over 8 x 8 tiles, stored as int8 (VTA's check_alu)."""
    rng = np.random.default_rng(6)
    a = random_acc(rng, -16, 16, (8, 8), spec)
    imm = int(rng.integers(1, 5))
    if kind is None:
        b = random_acc(rng, -16, 16, (8, 8), spec)
        out, _ = acc_program(spec, [a, b], [(opcode, None)])
        expected = meaning(a.astype(np.int64), b.astype(np.int64))
    else:
        # VTA writes x << imm as a right shift by -imm
        out, _ = acc_program(spec, [a], [(opcode, -imm if kind == "neg" else imm)])
        expected = meaning(a.astype(np.int64), imm)
    np.testing.assert_array_equal(out, to_out(expected, spec))


# -- 7. relu --------------------------------------------------------------------------------------------
@SPECS
def test_relu(spec):
    """max(a, 0) then min(., 127): the clip of a relu into int8."""
    rng = np.random.default_rng(7)
    a = random_acc(rng, -256, 256, (8, 10), spec)
    out, _ = acc_program(spec, [a], [(AluOpcode.MAX, 0), (AluOpcode.MIN, out_max(spec))])
    np.testing.assert_array_equal(out, np.clip(a, 0, out_max(spec)).astype(np.int8))


# -- 8. shift and scale -------------------------------------------------------------------------------
@SPECS
def test_shift_and_scale(spec):
    """(a + imm_shift) >> imm_scale, as int8."""
    rng = np.random.default_rng(8)
    imm_shift, imm_scale = int(rng.integers(0, 8)), int(rng.integers(1, 5))
    a = random_acc(rng, -10, 10, (2, 8), spec)
    out, _ = acc_program(spec, [a], [(AluOpcode.ADD, imm_shift), (AluOpcode.SHR, imm_scale)])
    np.testing.assert_array_equal(out, to_out(np.right_shift(a + imm_shift, imm_scale), spec))


# -- beyond the unit tests: a 3x3 conv2d layer (VTA's conv2d schedule, small) --------------------------
def conv2d_stream(spec, dram, data, weight, rows, co_tile, threads=2, serial=False, shift=8):
    """A 3x3, stride-1, pad-1 conv2d as one stream: data (ci_blocks, H, W, BATCH, BLOCK)
    int8, weight (co_blocks, ci_blocks, 3, 3, BLOCK, BLOCK) int8; output tiles of `rows`
    rows x all W columns x `co_tile` output blocks go round-robin to `threads` virtual
    threads. Per tile: a reset GEMM, per input block a padded input LOAD (the image
    border is LOAD padding), a weight LOAD and one GEMM over the 9 x co_tile micro-op
    kernel, then shift/relu/clip ALU ops and a STORE per output block. Tokens: each
    load waits for its thread's previous GEMM (`serial`: for the GEMM before it), a
    tile's reset for its thread's previous STOREs. Returns (insns, out base, out shape)."""
    ci_blocks, height, width = data.shape[:3]
    co_blocks = weight.shape[0]
    padded_width = width + 2
    inp_region, wgt_region, acc_region = (rows + 2) * padded_width, co_tile * 9, co_tile * rows * width
    x_base = dram.put_tiles(MemoryType.INP, data, spec)
    w_base = dram.put_tiles(MemoryType.WGT, weight, spec)
    out_base = dram.alloc_tiles(MemoryType.OUT, co_blocks * height * width, spec)
    uops, kernels = [], []
    for t in range(threads):
        gemm_begin = len(uops)
        for c in range(co_tile):
            for kh in range(3):
                for kw in range(3):
                    uops.append(
                        MicroOp(
                            t * acc_region + c * rows * width,
                            t * inp_region + kh * padded_width + kw,
                            t * wgt_region + c * 9 + kh * 3 + kw,
                        )
                    )
        reset_begin = len(uops)
        uops += [MicroOp(t * acc_region + c * rows * width, 0, 0) for c in range(co_tile)]
        kernels.append((gemm_begin, reset_begin, len(uops)))
        uops.append(MicroOp(t * acc_region, 0))
    insns = [
        Load(
            memory_type=MemoryType.UOP,
            sram_base=0,
            dram_base=dram.put_uops(uops, spec),
            y_size=1,
            x_size=len(uops),
            x_stride=1,
        )
    ]
    tiles = [(oh, co) for co in range(0, co_blocks, co_tile) for oh in range(0, height, rows)]
    steps = [
        (p, cb)
        for first in range(0, len(tiles), threads)
        for cb in range(ci_blocks)
        for p in range(first, min(first + threads, len(tiles)))
    ]
    last_step = {p % threads: (p, ci_blocks - 1) for p in range(len(tiles))}  # each thread's last step
    for first in range(0, len(tiles), threads):
        group = range(first, min(first + threads, len(tiles)))
        for p in group:
            g, r, a = kernels[p % threads]
            insns.append(
                Gemm(
                    reset=True,
                    uop_begin=r,
                    uop_end=a,
                    iter_out=rows,
                    iter_in=width,
                    dst_factor_out=width,
                    dst_factor_in=1,
                    src_factor_out=0,
                    src_factor_in=0,
                    wgt_factor_out=0,
                    wgt_factor_in=0,
                    pop_next=p >= threads,
                )
            )
        for cb in range(ci_blocks):
            for p in group:
                t, (oh, co) = p % threads, tiles[p]
                top = max(oh - 1, 0)
                bottom = min(oh + rows + 1, height)
                is_first = steps.index((p, cb)) == 0 if serial else (p < threads and cb == 0)
                insns.append(
                    Load(
                        memory_type=MemoryType.INP,
                        sram_base=t * inp_region,
                        dram_base=x_base + (cb * height + top) * width,
                        y_size=bottom - top,
                        x_size=width,
                        x_stride=width,
                        y_pad_0=int(oh == 0),
                        y_pad_1=int(oh + rows == height),
                        x_pad_0=1,
                        x_pad_1=1,
                        pop_next=not is_first,
                    )
                )
                insns.append(
                    Load(
                        memory_type=MemoryType.WGT,
                        sram_base=t * wgt_region,
                        dram_base=w_base + (co * ci_blocks + cb) * 9,
                        y_size=co_tile,
                        x_size=9,
                        x_stride=ci_blocks * 9,
                        push_next=True,
                    )
                )
            for p in group:
                g, r, a = kernels[p % threads]
                is_last = steps[-1] == (p, cb) if serial else last_step[p % threads] == (p, cb)
                insns.append(
                    Gemm(
                        uop_begin=g,
                        uop_end=r,
                        iter_out=rows,
                        iter_in=width,
                        dst_factor_out=width,
                        dst_factor_in=1,
                        src_factor_out=padded_width,
                        src_factor_in=1,
                        wgt_factor_out=0,
                        wgt_factor_in=0,
                        pop_prev=True,
                        push_prev=not is_last,
                    )
                )
        for p in group:
            t, (oh, co) = p % threads, tiles[p]
            g, r, a = kernels[t]
            for op, imm in ((AluOpcode.SHR, shift), (AluOpcode.MAX, 0), (AluOpcode.MIN, out_max(spec))):
                insns.append(
                    Alu(
                        alu_opcode=op,
                        use_imm=True,
                        imm=imm,
                        uop_begin=a,
                        uop_end=a + 1,
                        iter_out=co_tile * rows,
                        iter_in=width,
                        dst_factor_out=width,
                        dst_factor_in=1,
                        src_factor_out=width,
                        src_factor_in=1,
                        push_next=op == AluOpcode.MIN,
                    )
                )
            for c in range(co_tile):
                insns.append(
                    Store(
                        sram_base=t * acc_region + c * rows * width,
                        dram_base=out_base + ((co + c) * height + oh) * width,
                        y_size=1,
                        x_size=rows * width,
                        x_stride=rows * width,
                        pop_prev=c == 0,
                        push_prev=c == co_tile - 1 and (p + threads < len(tiles) or p == len(tiles) - 1),
                    )
                )
    insns.append(Finish(pop_next=True))
    return insns, out_base, (co_blocks, height, width, spec.batch, spec.block)


def conv2d_reference(data, weight, spec, shift=8):
    ci_blocks, height, width = data.shape[:3]
    padded = np.zeros((ci_blocks, height + 2, width + 2, *data.shape[3:]), np.int64)
    padded[:, 1:-1, 1:-1] = data
    acc = sum(
        np.einsum(
            "chwbk,ocxk->ohwbx", padded[:, kh : kh + height, kw : kw + width], weight[:, :, kh, kw].astype(np.int64)
        )
        for kh in range(3)
        for kw in range(3)
    )
    acc = to_out(acc, dataclasses.replace(spec, log_inp_width=spec.log_acc_width))
    return np.clip(acc >> shift, 0, out_max(spec)).astype(np.int8)


def conv2d_case(spec, height, ci_blocks, co_blocks, seed=9):
    rng = np.random.default_rng(seed)
    data = rng.integers(-128, 128, size=(ci_blocks, height, height, spec.batch, spec.block)).astype(np.int8)
    weight = rng.integers(-128, 128, size=(co_blocks, ci_blocks, 3, 3, spec.block, spec.block)).astype(np.int8)
    return data, weight


@SPECS
@pytest.mark.parametrize(
    "rows,co_tile,threads,serial", [(2, 1, 1, False), (3, 2, 2, False), (2, 2, 2, True), (6, 1, 2, False)]
)
def test_conv2d_layer(spec, rows, co_tile, threads, serial):
    """A 6x6 conv2d with two input and two output blocks, in several tilings: padding,
    multi-micro-op kernels, strided weight loads and both token patterns, bit-exact."""
    data, weight = conv2d_case(spec, 6, 2, 2)
    dram = Dram()
    insns, out_base, shape = conv2d_stream(spec, dram, data, weight, rows, co_tile, threads, serial)
    result = simulate(insns, dram, spec)
    out = dram.get_tiles(MemoryType.OUT, out_base, int(np.prod(shape[:3])), spec).reshape(shape)
    np.testing.assert_array_equal(out, conv2d_reference(data, weight, spec))
    assert result.stats.macs == 6 * 6 * 2 * 2 * 9 * spec.macs_per_cycle


def test_conv2d_latency_hiding():
    data, weight = conv2d_case(DEFAULT, 14, 4, 4)
    cycles = {}
    for serial in (True, False):
        dram = Dram()
        insns, _, _ = conv2d_stream(DEFAULT, dram, data, weight, rows=7, co_tile=2, threads=2, serial=serial)
        cycles[serial] = simulate(insns, dram, DEFAULT).cycles
    assert cycles[False] < 0.9 * cycles[True]
