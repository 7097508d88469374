"""The cost model (analysis/cost_model.py) on tiny loop IR, against times worked out
by hand for a described machine, and the hardware descriptions it reads
(analysis/machine.py). No timing here: how well it ranks measured kernels is
bench/analysis.py's to say (docs/performance/analysis.md).

The machine of these tests issues 1e9 compute slots a second (1 GHz, one FMA a
cycle) and 1e9 L1 accesses (32 GB/s of 32-byte vectors), so a slot or an access
is a nanosecond.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

from tilecraft.analysis import machine as machines
from tilecraft.analysis.cost_model import CostModel, predict_kernel
from tilecraft.analysis.framework import AnalysisManager, annotate
from tilecraft.analysis.parallel_work import MAX_THREADS_ATTR
from tilecraft.dialects.loop import ForOp
from tilecraft.analysis.machine import Cache, Energy, Machine, MachineError, complete, load_machine
from tilecraft.driver.context import parse_text

KIB = 1024
BOX = Machine(
    "test box", peak_gflops=1.0, bandwidth_gbs=4.0, cores=2, frequency_ghz=1.0, vector_bits=256, fma=True,
    fma_per_cycle=1.0, line_bytes=64, caches=(Cache(32, 32.0), Cache(1024, 16.0), Cache(8192, 8.0, shared=True)),
)  # fmt: skip
NS = 1e-9


def kernel(text: str):
    module = parse_text(text)
    return next(iter(module.ops))


def scale(n: int, lanes: int = 1, kind: str = "serial") -> str:
    """B = A * 2 over n floats: serial, or in vectors of `lanes` under `kind` loops."""
    if lanes == 1:
        return f"""
func.func @scale(%A: memref<{n}xf32>, %B: memref<{n}xf32>) {{
  %two = arith.constant 2.0 : f32
  loop.for %i = 0 to {n} {kind} {{
    %a = memref.load %A[%i] : memref<{n}xf32>
    %b = arith.mulf %a, %two : f32
    memref.store %b, %B[%i] : memref<{n}xf32>
  }}
  func.return
}}"""
    return f"""
func.func @scale(%A: memref<{n}xf32>, %B: memref<{n}xf32>) {{
  %two = arith.constant 2.0 : f32
  %w = arith.constant {lanes} : index
  loop.for %o = 0 to {n // lanes} {kind} {{
    %base = arith.muli %o, %w : index
    loop.for %l = 0 to {lanes} vectorized {{
      %i = arith.addi %base, %l : index
      %a = memref.load %A[%i] : memref<{n}xf32>
      %b = arith.mulf %a, %two : f32
      memref.store %b, %B[%i] : memref<{n}xf32>
    }}
  }}
  func.return
}}"""


def test_a_serial_loop_is_one_slot_per_op_and_access():
    # 1024 loads and 1024 stores (L1: 2048 ns) beat 1024 multiplies (1024 ns);
    # A and B (8 KiB) fit the L1: nothing moves in from further out.
    estimate = predict_kernel(kernel(scale(1024)), BOX)
    assert estimate.predicted_s == pytest.approx(2048 * NS)
    assert estimate.bound == "L1"
    assert (estimate.flops, estimate.bytes) == (1024, 2 * 1024 * 4)
    assert estimate.moved == {"L2": 0, "L3": 0, "DRAM": 0}


def test_a_vectorized_loop_is_one_slot_per_register():
    # 16 lanes of f32 fill two 256-bit registers: 64 groups of 2 loads, 2 stores.
    vector = predict_kernel(kernel(scale(1024, lanes=16)), BOX)
    assert vector.predicted_s == pytest.approx(64 * 4 * NS)
    assert vector.predicted_s < predict_kernel(kernel(scale(1024)), BOX).predicted_s / 4
    assert (vector.flops, vector.bytes) == (1024, 2 * 1024 * 4)


def test_a_kernel_twice_as_large_takes_twice_as_long():
    small, large = (predict_kernel(kernel(scale(n, lanes=16)), BOX) for n in (1024, 2048))
    assert large.predicted_s == pytest.approx(2 * small.predicted_s)


def test_what_does_not_fit_a_cache_comes_from_the_next():
    # A and B, 64 KiB each, do not fit the 32 KiB L1 but fit the L2: each comes in
    # once (consecutive iterations share lines), 128 KiB at 16 GB/s = 8192 ns,
    # more than the 1024 groups' 4096 L1 accesses.
    n = 16 * KIB
    estimate = predict_kernel(kernel(scale(n, lanes=16)), BOX)
    assert estimate.moved == {"L2": 2 * n * 4, "L3": 0, "DRAM": 0}
    assert estimate.bound == "L2"
    assert estimate.predicted_s == pytest.approx(2 * n * 4 / 16e9)


REUSE = """
func.func @add_row(%A: memref<256x1024xf32>, %r: memref<1024xf32>, %B: memref<256x1024xf32>) {
  loop.for %i = 0 to 256 {
    loop.for %j = 0 to 1024 {
      %a = memref.load %A[%i, %j] : memref<256x1024xf32>
      %x = memref.load %r[%j] : memref<1024xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %B[%i, %j] : memref<256x1024xf32>
    }
  }
  func.return
}"""


def test_a_row_read_by_every_iteration_comes_in_once():
    # One iteration of %i touches a row of A, of B and all of %r (12 KiB): it fits
    # the L1, so %r stays there for the next; A and B (1 MiB each) come in once.
    estimate = predict_kernel(kernel(REUSE), BOX)
    assert estimate.moved["L2"] == 2 * 256 * 1024 * 4 + 1024 * 4
    # 2 MiB + 4 KiB do not fit the 1 MiB L2 either: the same bytes come from L3.
    assert estimate.moved["L3"] == estimate.moved["L2"]
    assert estimate.moved["DRAM"] == 0


def test_a_parallel_loop_splits_the_work_over_the_cores():
    # The launch's own cap (tc.max_threads, as loop-outline-parallel writes it)
    # lets both cores take half of the 64 groups each.
    serial = predict_kernel(kernel(scale(1024, lanes=16)), BOX)
    f = kernel(scale(1024, lanes=16, kind="parallel"))
    next(op for op in f.walk() if isinstance(op, ForOp)).attributes[MAX_THREADS_ATTR] = IntegerAttr(2, i64)
    parallel = predict_kernel(f, BOX)
    assert parallel.predicted_s == pytest.approx(serial.predicted_s / 2)
    one_core = predict_kernel(f, replace(BOX, cores=1))
    assert one_core.predicted_s == pytest.approx(serial.predicted_s)


def test_a_multiply_feeding_an_add_is_one_fused_slot():
    text = """
func.func @axpy(%X: memref<1024xf32>, %Y: memref<1024xf32>) {
  %a = arith.constant 3.0 : f32
  loop.for %i = 0 to 1024 {
    %x = memref.load %X[%i] : memref<1024xf32>
    %y = memref.load %Y[%i] : memref<1024xf32>
    %m = arith.mulf %a, %x : f32
    %s = arith.addf %m, %y : f32
    %t = arith.mulf %s, %s : f32
    %u = arith.mulf %t, %t : f32
    %v = arith.mulf %u, %u : f32
    memref.store %v, %Y[%i] : memref<1024xf32>
  }
  func.return
}"""
    fused = predict_kernel(kernel(text), BOX)
    assert fused.flops == 5 * 1024
    assert fused.bound == "compute" and fused.predicted_s == pytest.approx(4 * 1024 * NS)
    unfused = predict_kernel(kernel(text), replace(BOX, fma=False))
    assert unfused.predicted_s == pytest.approx(5 * 1024 * NS)


def test_an_invariant_op_is_hoisted_out_of_the_loop():
    text = """
func.func @hoist(%A: memref<1024xf32>, %c: memref<1xf32>) {
  %z = arith.constant 0 : index
  loop.for %i = 0 to 1024 {
    %x = memref.load %c[%z] : memref<1xf32>
    %e = math.exp %x : f32
    %a = memref.load %A[%i] : memref<1024xf32>
    %s = arith.addf %a, %e : f32
    memref.store %s, %A[%i] : memref<1024xf32>
  }
  func.return
}"""
    # The exp and the load of %c run once; the loop does 2 accesses and an add.
    estimate = predict_kernel(kernel(text), BOX)
    assert estimate.predicted_s == pytest.approx((2 * 1024 + 1) * NS)
    assert estimate.flops == 1024 + 1


def test_energy_is_given_only_with_a_table():
    assert predict_kernel(kernel(scale(1024)), BOX).energy_j is None
    table = Energy(pj_per_flop=2.0, pj_per_byte={"L1": 0.5, "L2": 1.0, "L3": 4.0, "DRAM": 100.0})
    estimate = predict_kernel(kernel(scale(1024)), replace(BOX, energy=table))
    # 1024 flops and 8 KiB through the L1, nothing from further out
    assert estimate.energy_j == pytest.approx((1024 * 2.0 + 8192 * 0.5) * 1e-12)


def test_an_op_without_a_rule_is_reported_not_counted_as_nothing():
    text = """
func.func @calls(%A: memref<4xf32>) {
  loop.for %i = 0 to 4 {
    func.call @other(%A) : (memref<4xf32>) -> ()
  }
  func.return
}
func.func private @other(memref<4xf32>)"""
    estimate = predict_kernel(kernel(text), BOX)
    assert estimate.unknown == "no cost rule for func.call"
    assert estimate.facts()["predicted_s"] is None


MODEL = """
func.func @main(%x: memref<1024xf32>, %y: memref<1024xf32>) attributes {tc.arena_bytes = 0 : i64} {
  func.call @scale(%x, %y) : (memref<1024xf32>, memref<1024xf32>) -> ()
  func.call @scale(%y, %x) : (memref<1024xf32>, memref<1024xf32>) -> ()
  func.return
}
""" + scale(1024)


def test_the_analysis_predicts_each_kernel_and_weighs_it_by_its_calls():
    result = AnalysisManager().run(CostModel(BOX), parse_text(MODEL))
    assert [f.label for f in result.ops] == ["scale"]  # not the entry
    assert result.ops[0].values["bound"] == "L1"
    assert result.totals["predicted_s"] == pytest.approx(2 * 2048 * NS)
    assert result.totals["model_flops"] == 2 * 1024
    annotate(result)
    assert "tc.predicted_s" in result.ops[0].op.attributes


# -- descriptions ------------------------------------------------------------------


def describe(tmp_path, **fields) -> str:
    path = tmp_path / "machine.json"
    path.write_text(json.dumps({"name": "x", "peak_gflops": 10, "bandwidth_gbs": 5, **fields}))
    return str(path)


def test_a_full_description_is_read_as_written(tmp_path):
    caches = [{"size_kb": 32, "bandwidth_gbs": 32}, {"size_kb": 1024, "bandwidth_gbs": 16},
              {"size_kb": 8192, "bandwidth_gbs": 8, "shared": True}]  # fmt: skip
    energy = {"pj_per_flop": 2, "pj_per_byte": {"L1": 0.5, "L2": 1, "L3": 4, "DRAM": 100}}
    read = load_machine(describe(tmp_path, cores=2, frequency_ghz=1, vector_bits=256, fma=True, fma_per_cycle=1,
                                 line_bytes=64, caches=caches, energy=energy))  # fmt: skip
    expected = replace(BOX, name="x", peak_gflops=10.0, bandwidth_gbs=5.0,
                       energy=Energy(2.0, {"L1": 0.5, "L2": 1.0, "L3": 4.0, "DRAM": 100.0}))  # fmt: skip
    assert read == expected
    assert complete(read) == read  # nothing left to take from the host


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"cores": "two"}, "field 'cores' must be a positive integer, not 'two'"),
        ({"cores": 2.5}, "field 'cores' must be a positive integer"),
        ({"fma": 1}, "field 'fma' must be true or false"),
        ({"frequency_ghz": -3}, "field 'frequency_ghz' must be a positive number"),
        ({"caches": {"L1": 32}}, "field 'caches' must be a list of caches"),
        ({"caches": [{"size_kb": 32}]}, "field 'caches[0]' has no 'bandwidth_gbs'"),
        ({"caches": [{"size_kb": "32K", "bandwidth_gbs": 1}]}, "field 'caches[0].size_kb' must be a positive number"),
        ({"caches": [{"size_kb": 32, "bandwidth_gbs": 1, "ways": 8}]}, "field 'caches[0]' has an unknown field 'ways'"),
        ({"energy": {"pj_per_flop": 1}}, "field 'energy' has no 'pj_per_byte'"),
        ({"energy": {"pj_per_flop": 1, "pj_per_byte": {"L0": 1}}}, "names 'L0', not a level"),
        ({"energy": {"pj_per_flop": "cheap", "pj_per_byte": {}}}, "field 'energy.pj_per_flop' must be"),
        ({"frequency_mhz": 3000}, "unknown field 'frequency_mhz'"),
    ],
)
def test_a_bad_field_is_a_machine_error_naming_it(tmp_path, fields, message):
    with pytest.raises(MachineError) as error:
        load_machine(describe(tmp_path, **fields))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_energy_table_must_name_every_level(tmp_path):
    partial = replace(BOX, energy=Energy(1.0, {"L1": 1.0, "L2": 1.0, "DRAM": 1.0}))
    with pytest.raises(MachineError, match="energy.pj_per_byte has no 'L3'"):
        complete(partial)


def test_fields_left_out_are_the_hosts(monkeypatch):
    monkeypatch.setattr(machines, "host_machine", lambda: BOX)
    described = Machine("laptop", peak_gflops=100.0, bandwidth_gbs=20.0, cores=8, vector_bits=512)
    done = complete(described)
    assert (done.name, done.peak_gflops, done.cores, done.vector_bits) == ("laptop", 100.0, 8, 512)
    assert (done.caches, done.frequency_ghz, done.fma_per_cycle) == (BOX.caches, 1.0, 1.0)


def test_the_host_probe_fills_every_field_and_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(tmp_path))
    host = machines.host_machine()
    assert all(getattr(host, f) is not None for f in machines.CPU_FIELDS) and host.energy is None
    assert host.caches and all(c.size_kb > 0 and c.bandwidth_gbs > 0 for c in host.caches)
    monkeypatch.setattr(machines, "probe", lambda: pytest.fail("measured again"))
    assert machines.host_machine() == host
