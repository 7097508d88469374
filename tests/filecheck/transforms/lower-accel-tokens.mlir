// RUN: tilecraft-opt %s --split-input-file -p lower-accel-tokens | filecheck %s

// One GEMM between loads and a store: a token between modules becomes a push on
// the producer and a pop on the consumer; the GEMM waits only for the later of the
// two loads (the load module runs in order), and the inp->wgt order needs nothing.
accel.program @gemm {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  %i = accel.load inp sram(0) dram(0) size(1, 16) stride(16)
  %w = accel.load wgt sram(0) dram(0) size(1, 1) stride(1) after %i
  %g = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %i, %w
  %s = accel.store out sram(0) dram(0) size(1, 1) stride(1) after %g
  accel.finish after %s
}

// CHECK-LABEL: accel.program @gemm {
// CHECK:         accel.load inp sram(0) dram(0) size(1, 16) stride(16){{$}}
// CHECK-NEXT:    accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next){{$}}
// CHECK-NEXT:    accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev, push_next){{$}}
// CHECK-NEXT:    accel.store out sram(0) dram(0) size(1, 1) stride(1) flags(pop_prev, push_prev){{$}}
// CHECK-NEXT:    accel.finish flags(pop_next){{$}}

// -----

// Double buffering (two virtual threads): the loads of thread 1 run while thread 0
// computes. RAW edges load->gemm, WAR edges gemm->load (the next load into the same
// buffer waits for the GEMM that read it). Each queue's k-th pop takes its k-th push.
accel.program @pingpong {
  accel.uop_kernel @k0 {
    accel.uop 0, 0, 0
  }
  accel.uop_kernel @k1 {
    accel.uop 1, 1, 1
  }
  %l0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  %l1 = accel.load inp sram(1) dram(1) size(1, 1) stride(1)
  %g0 = accel.gemm @k0 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %l0
  %l2 = accel.load inp sram(0) dram(2) size(1, 1) stride(1) after %g0
  %g1 = accel.gemm @k1 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %l1
  %l3 = accel.load inp sram(1) dram(3) size(1, 1) stride(1) after %g1
  %g2 = accel.gemm @k0 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %l2
  %g3 = accel.gemm @k1 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %l3
  accel.finish
}

// CHECK-LABEL: accel.program @pingpong {
// CHECK:         accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next){{$}}
// CHECK-NEXT:    accel.load inp sram(1) dram(1) size(1, 1) stride(1) flags(push_next){{$}}
// CHECK-NEXT:    accel.gemm @k0 {{.*}} flags(pop_prev, push_prev){{$}}
// CHECK-NEXT:    accel.load inp sram(0) dram(2) size(1, 1) stride(1) flags(pop_next, push_next){{$}}
// CHECK-NEXT:    accel.gemm @k1 {{.*}} flags(pop_prev, push_prev){{$}}
// CHECK-NEXT:    accel.load inp sram(1) dram(3) size(1, 1) stride(1) flags(pop_next, push_next){{$}}
// CHECK-NEXT:    accel.gemm @k0 {{.*}} flags(pop_prev){{$}}
// CHECK-NEXT:    accel.gemm @k1 {{.*}} flags(pop_prev){{$}}
// CHECK-NEXT:    accel.finish{{$}}

// -----

// Tokens inside one module are implied by stream order and dropped; a program
// with flags already and no tokens between modules is left as it is.
accel.program @local {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  %a = accel.load acc sram(0) dram(0) size(1, 1) stride(1)
  %g = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %a
  %w = accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  %h = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %g flags(pop_prev)
}

// CHECK-LABEL: accel.program @local {
// CHECK:         accel.load acc sram(0) dram(0) size(1, 1) stride(1){{$}}
// CHECK-NEXT:    accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0){{$}}
// CHECK-NEXT:    accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next){{$}}
// CHECK-NEXT:    accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev){{$}}
