// One case per accel verifier error: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: accel.load moves uop, inp, wgt or acc elements, not out.
  %0 = accel.load out sram(0) dram(0) size(1, 1) stride(1)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: a uop load has no padding.
  %0 = accel.load uop sram(0) dram(0) size(1, 1) stride(1) pad(0, 0, 1, 0)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.store' op: accel.store moves out elements, not acc.
  %0 = accel.store acc sram(0) dram(0) size(1, 1) stride(1)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.store' op: a store has no padding.
  %0 = accel.store out sram(0) dram(0) size(1, 1) stride(1) pad(1, 0, 0, 0)
}

// -----

// Field widths come from isa's layout at the program's spec.
accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: LOAD field x_stride: 70000 does not fit in 16 unsigned bits (bits 96-111, range [0, 65535])
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(70000)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: LOAD field x_pad_0: 16 does not fit in 4 unsigned bits (bits 120-123, range [0, 15])
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) pad(0, 0, 16, 0)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: dram_base must not be negative, got -1.
  %0 = accel.load inp sram(0) dram(-1) size(1, 1) stride(1)
}

// -----

// SRAM ranges: the input buffer holds 2048 elements at the default spec; padding
// rows and columns count.
accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: the inp buffer range [2000, 2052) passes its depth 2048.
  %0 = accel.load inp sram(2000) dram(0) size(2, 24) stride(24) pad(0, 0, 1, 1)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.store' op: the out buffer range [2047, 2049) passes its depth 2048.
  %0 = accel.store out sram(2047) dram(0) size(1, 2) stride(2)
}

// -----

// At BLOCK 32 the weight buffer holds 256 elements.
accel.program @p spec {LOG_BLOCK = 5 : i64} {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: the wgt buffer range [200, 264) passes its depth 256.
  %0 = accel.load wgt sram(200) dram(0) size(1, 64) stride(64)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: accel.gemm runs either a micro-op kernel (@k) or a uop range (uops(begin, end)), exactly one.
  %0 = "accel.gemm"() <{kernel = "k", uop_begin = #builtin.int<0>, uop_end = #builtin.int<1>, iter_out = #builtin.int<1>, iter_in = #builtin.int<1>, dst_factor_out = #builtin.int<0>, dst_factor_in = #builtin.int<0>, src_factor_out = #builtin.int<0>, src_factor_in = #builtin.int<0>, wgt_factor_out = #builtin.int<0>, wgt_factor_in = #builtin.int<0>}> : () -> !accel.token
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: iter_in must be at least 1, got 0.
  %0 = accel.gemm @k out 1 in 0 dst(0, 0) src(0, 0) wgt(0, 0)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.alu' op: the uop range [3, 3) is empty.
  %0 = accel.alu add uops(3, 3) out 1 in 1 dst(0, 0) src(0, 0)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: GEMM field iter_out: 20000 does not fit in 14 unsigned bits (bits 35-48, range [0, 16383])
  %0 = accel.gemm @k out 20000 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.alu' op: ALU field imm: 40000 does not fit in 16 signed bits (bits 112-127, range [-32768, 32767])
  %0 = accel.alu mul imm(40000) @k out 1 in 1 dst(0, 0) src(0, 0)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'accel.uop' op: micro-op field dst_idx: 2048 does not fit in 11 unsigned bits (bits 0-10, range [0, 2047])
    accel.uop 2048, 0, 0
  }
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.uop_kernel' op: a micro-op kernel holds at least one accel.uop.
  accel.uop_kernel @k {
  }
}

// -----

// Whole-program checks: kernels by name, symbols, FINISH, DRAM placement.
accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: no accel.uop_kernel @nope in this program.
  %0 = accel.gemm @nope out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
}

// -----

// (xDSL's symbol table finds it.)
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'accel.program' op: Redefinition of symbol "A"
accel.program @p {
  accel.buffer @A inp dram(0) elems(4)
  accel.uop_kernel @A {
    accel.uop 0, 0, 0
  }
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.finish' op: a stream has one accel.finish, its last instruction.
  accel.finish
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
}

// -----

// 4 input elements of 16 bytes end at byte 64; the kernel pinned at uop element 8
// starts at byte 32.
accel.program @p {
  accel.buffer @A inp dram(0) elems(4)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.uop_kernel' op: its DRAM bytes [0x20, 0x24) overlap those of the accel.buffer at {{.*}}invalid.mlir:[[# @LINE - 1]]:3 [0x0, 0x40).
  accel.uop_kernel @k dram(8) {
    accel.uop 0, 0, 0
  }
}

// -----

// GEMM index ranges from micro-ops and loop factors.
accel.program @p {
  accel.uop_kernel @k {
    accel.uop 2000, 0, 0
    accel.uop 1, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: the dst index reaches 2051 (micro-op dst up to 2000, + 3 x 16 + 1 x 3), past the acc buffer's depth 2048.
  %0 = accel.gemm @k out 4 in 2 dst(16, 3) src(0, 0) wgt(0, 0)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 2047, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: the src index reaches 2048 (micro-op src up to 2047, + 0 x 0 + 1 x 1), past the inp buffer's depth 2048.
  %0 = accel.gemm @k out 1 in 2 dst(0, 0) src(0, 1) wgt(0, 0)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 1000
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: the wgt index reaches 1024 (micro-op wgt up to 1000, + 1 x 24 + 0 x 0), past the wgt buffer's depth 1024.
  %0 = accel.gemm @k out 2 in 1 dst(0, 0) src(0, 0) wgt(24, 0)
}

// -----

// An ALU with an immediate never reads acc[src]: only dst is checked.
accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 2047, 0
  }
  %0 = accel.alu add imm(1) @k out 1 in 2 dst(0, 1) src(0, 5)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.alu' op: the src index reaches 2052 (micro-op src up to 2047, + 0 x 0 + 1 x 5), past the acc buffer's depth 2048.
  %1 = accel.alu add @k out 1 in 2 dst(0, 1) src(0, 5)
}

// -----

// An explicit uop range must hold micro-ops of a placed kernel.
accel.program @p {
  accel.uop_kernel @k dram(0) {
    accel.uop 0, 0, 0
    accel.uop 1, 1, 0
  }
  %0 = accel.load uop sram(10) dram(0) size(1, 2) stride(2)
  %1 = accel.gemm uops(10, 12) out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: uop slot 12 holds no micro-op of a placed kernel here; load a kernel there first (accel.load uop ... from its dram address).
  %2 = accel.gemm uops(10, 13) out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
}

// -----

// Tokens.
accel.program @p {
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.store' op: waits on the accel.load at {{.*}}invalid.mlir:[[# @LINE - 1]]:3: the load and store modules share no token queue (VTA's queues join load and store to compute only); make the dependence go through a compute instruction
  %1 = accel.store out sram(0) dram(0) size(1, 1) stride(1) after %0
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.gemm' op: waits on the accel.load at {{.*}}invalid.mlir:[[# @LINE + 2]]:3, which comes later in the stream; the order of this dependence cannot be kept
  %0 = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %1
  %1 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
}

// -----

accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: the program mixes dependence flags with tokens between modules (e.g. the accel.gemm at {{.*}}invalid.mlir:[[# @LINE + 2]]:3); use one or the other
  %1 = accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  %2 = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %0 flags(pop_prev)
}

// -----

// Flags: pushes and pops match per queue, and the three modules cannot deadlock.
accel.program @p {
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.finish' op: pop 1 on the load->compute queue has no matching push (the stream pushes 0 times and pops 1 times)
  accel.finish flags(pop_prev)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'accel.load' op: push 2 on the load->compute queue is never popped (the stream pushes 2 times and pops 1 times)
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  %1 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  accel.finish flags(pop_prev)
}

// -----

accel.program @p {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: pop_prev: the load module has no previous module
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(pop_prev)
}

// -----

// The load waits for the GEMM, which waits for a later load: neither can start.
accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.load' op: the stream deadlocks: the load module waits on compute->load (accel.load at {{.*}}invalid.mlir:[[# @LINE + 1]]:3); the compute module waits on load->compute (accel.gemm at {{.*}}invalid.mlir:[[# @LINE + 2]]:3)
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(pop_next)
  %1 = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev, push_prev)
  %2 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
}

// -----

// The spec.
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'accel.program' op: bad spec: accel.program spec:LOG_BLOCK: 99 is out of range [0, 8]
accel.program @p spec {LOG_BLOCK = 99 : i64} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'accel.program' op: bad spec: no/such/spec.json: cannot read the spec file: No such file or directory
accel.program @p spec "no/such/spec.json" {
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'accel.finish' op: {{.*}}accel.program
  accel.finish
  func.return
}
