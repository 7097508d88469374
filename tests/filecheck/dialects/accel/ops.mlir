// Every accel op in its custom syntax: printed, parsed again, printed identically.
// RUN: tilecraft-opt %s --split-input-file -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir --split-input-file | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// RUN: %generic-roundtrip

// Token level: each instruction yields a token, `after` lists what it waits for.
accel.program @tokens {
  accel.buffer @A inp dram(0) elems(64)
  accel.buffer @B wgt dram(4) elems(4)
  accel.buffer @C out dram(128) elems(16)
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
    accel.uop 1, 1, 0
  }
  %i = accel.load inp sram(0) dram(0) size(4, 16) stride(16) pad(1, 1, 0, 0)
  %w = accel.load wgt sram(0) dram(4) size(1, 4) stride(4)
  %a = accel.load acc sram(100) dram(8) size(2, 2) stride(4)
  %z = accel.gemm reset @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  %g = accel.gemm @k out 4 in 14 dst(14, 1) src(16, 1) wgt(0, 0) after %i, %w, %z
  %r = accel.alu max imm(0) @k out 1 in 16 dst(1, 0) src(1, 0) after %g
  %s = accel.alu shr imm(-8) @k out 1 in 1 dst(0, 0) src(0, 0)
  %t = accel.alu add @k out 1 in 1 dst(0, 0) src(2, 0)
  %o = accel.store out sram(0) dram(128) size(1, 16) stride(16) after %t
  accel.finish after %o
}

// CHECK-LABEL: accel.program @tokens {
// CHECK-NEXT:    accel.buffer @A inp dram(0) elems(64)
// CHECK-NEXT:    accel.buffer @B wgt dram(4) elems(4)
// CHECK-NEXT:    accel.buffer @C out dram(128) elems(16)
// CHECK-NEXT:    accel.uop_kernel @k {
// CHECK-NEXT:      accel.uop 0, 0, 0
// CHECK-NEXT:      accel.uop 1, 1, 0
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[I:.*]] = accel.load inp sram(0) dram(0) size(4, 16) stride(16) pad(1, 1, 0, 0)
// CHECK-NEXT:    %[[W:.*]] = accel.load wgt sram(0) dram(4) size(1, 4) stride(4)
// CHECK-NEXT:    %{{.*}} = accel.load acc sram(100) dram(8) size(2, 2) stride(4)
// CHECK-NEXT:    %[[Z:.*]] = accel.gemm reset @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
// CHECK-NEXT:    %[[G:.*]] = accel.gemm @k out 4 in 14 dst(14, 1) src(16, 1) wgt(0, 0) after %[[I]], %[[W]], %[[Z]]
// CHECK-NEXT:    %{{.*}} = accel.alu max imm(0) @k out 1 in 16 dst(1, 0) src(1, 0) after %[[G]]
// CHECK-NEXT:    %{{.*}} = accel.alu shr imm(-8) @k out 1 in 1 dst(0, 0) src(0, 0)
// The tensor operand form: no imm.
// CHECK-NEXT:    %[[T:.*]] = accel.alu add @k out 1 in 1 dst(0, 0) src(2, 0)
// CHECK-NEXT:    %[[O:.*]] = accel.store out sram(0) dram(128) size(1, 16) stride(16) after %[[T]]
// CHECK-NEXT:    accel.finish after %[[O]]
// CHECK-NEXT:  }

// -----

// Flag level, with a pinned kernel, explicit uop loads and ranges (what the
// disassembler prints), and a spec given as overrides of VTA's default.
accel.program @flags spec {LOG_BLOCK = 5 : i64, LOG_BATCH = 1 : i64} {
  accel.uop_kernel @k dram(16) {
    accel.uop 3, 1, 2
  }
  %0 = accel.load wgt sram(0) dram(0) size(1, 4) stride(4) flags(push_next)
  %1 = accel.load uop sram(7) dram(16) size(1, 1) stride(1)
  %2 = accel.gemm uops(7, 8) out 2 in 3 dst(4, 1) src(4, 1) wgt(0, 1) flags(pop_prev, push_next)
  %3 = accel.alu min uops(7, 8) out 1 in 1 dst(0, 0) src(0, 0)
  %4 = accel.store out sram(3) dram(0) size(1, 1) stride(1) flags(pop_prev)
  accel.finish
}

// CHECK-LABEL: accel.program @flags spec {LOG_BLOCK = 5 : i64, LOG_BATCH = 1 : i64} {
// CHECK-NEXT:    accel.uop_kernel @k dram(16) {
// CHECK-NEXT:      accel.uop 3, 1, 2
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = accel.load wgt sram(0) dram(0) size(1, 4) stride(4) flags(push_next)
// CHECK-NEXT:    %{{.*}} = accel.load uop sram(7) dram(16) size(1, 1) stride(1)
// CHECK-NEXT:    %{{.*}} = accel.gemm uops(7, 8) out 2 in 3 dst(4, 1) src(4, 1) wgt(0, 1) flags(pop_prev, push_next)
// CHECK-NEXT:    %{{.*}} = accel.alu min uops(7, 8) out 1 in 1 dst(0, 0) src(0, 0)
// CHECK-NEXT:    %{{.*}} = accel.store out sram(3) dram(0) size(1, 1) stride(1) flags(pop_prev)
// CHECK-NEXT:    accel.finish
// CHECK-NEXT:  }

// -----

// An empty program, and a zero-size DMA (a no-op that can still carry flags).
accel.program @empty {
}
accel.program @noop {
  %0 = accel.load inp sram(0) dram(0) size(0, 0) stride(0) flags(push_next)
  accel.finish flags(pop_prev)
}

// CHECK-LABEL: accel.program @empty {
// CHECK-NEXT:  }
// CHECK-LABEL: accel.program @noop {
// CHECK-NEXT:    %{{.*}} = accel.load inp sram(0) dram(0) size(0, 0) stride(0) flags(push_next)
// CHECK-NEXT:    accel.finish flags(pop_prev)
