// RUN: tilecraft-opt %s --split-input-file -p insert-dependences | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p "insert-dependences{serial=true}" | filecheck %s --check-prefix=SERIAL

// Two threads, double-buffered: thread 1's loads need not wait for thread 0's GEMM
// (other buffers), and the second round's reload of thread 0's input waits for
// thread 0's GEMM only (WAR).
accel.program @two_threads {
  accel.uop_kernel @t0 {
    accel.uop 0, 0, 0
  }
  accel.uop_kernel @t1 {
    accel.uop 1, 1, 1
  }
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  %1 = accel.load wgt sram(0) dram(0) size(1, 1) stride(1)
  %2 = accel.load inp sram(1) dram(1) size(1, 1) stride(1)
  %3 = accel.load wgt sram(1) dram(1) size(1, 1) stride(1)
  %4 = accel.gemm @t0 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  %5 = accel.gemm @t1 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  %6 = accel.load inp sram(0) dram(2) size(1, 1) stride(1)
  %7 = accel.load wgt sram(0) dram(2) size(1, 1) stride(1)
  %8 = accel.gemm @t0 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  %9 = accel.store out sram(0) dram(0) size(1, 2) stride(2)
  accel.finish
}

// CHECK:      accel.load inp sram(0) dram(0) size(1, 1) stride(1){{$}}
// CHECK-NEXT: accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT: accel.load inp sram(1) dram(1) size(1, 1) stride(1){{$}}
// CHECK-NEXT: accel.load wgt sram(1) dram(1) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT: accel.gemm @t0 {{.*}} flags(pop_prev, push_prev)
// CHECK-NEXT: accel.gemm @t1 {{.*}} flags(pop_prev){{$}}
// CHECK-NEXT: accel.load inp sram(0) dram(2) size(1, 1) stride(1) flags(pop_next)
// CHECK-NEXT: accel.load wgt sram(0) dram(2) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT: accel.gemm @t0 {{.*}} flags(pop_prev, push_next)
// CHECK-NEXT: accel.store out sram(0) dram(0) size(1, 2) stride(2) flags(pop_prev, push_prev)
// CHECK-NEXT: accel.finish flags(pop_next)

// Serial: every instruction waits for its neighbour module's previous one, so
// the second round's loads wait for thread 1's GEMM too (no overlap), and the
// first GEMM waits for all four loads.
// SERIAL:      accel.load wgt sram(1) dram(1) size(1, 1) stride(1) flags(push_next)
// SERIAL-NEXT: accel.gemm @t0 {{.*}} flags(pop_prev){{$}}
// SERIAL-NEXT: accel.gemm @t1 {{.*}} flags(push_prev){{$}}
// SERIAL-NEXT: accel.load inp sram(0) dram(2) size(1, 1) stride(1) flags(pop_next)

// -----

// A program that already orders itself (flags written by hand) is left as it is.
accel.program @by_hand {
  accel.uop_kernel @z {
    accel.uop 0, 0, 0
  }
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  %1 = accel.gemm reset @z out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev)
  accel.finish
}

// CHECK-LABEL: accel.program @by_hand
// CHECK:       accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT:  accel.gemm reset @z out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev)
// CHECK-NEXT:  accel.finish{{$}}

// -----

// Loads come out of inject-virtual-threads grouped by statement (both threads'
// inputs, then both threads' weights); the load module issues them in the order
// the GEMMs read them, so thread 0's GEMM does not wait for thread 1's input.
accel.program @interleaved {
  accel.uop_kernel @t0 {
    accel.uop 0, 0, 0
  }
  accel.uop_kernel @t1 {
    accel.uop 1, 1, 1
  }
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  %1 = accel.load inp sram(1) dram(1) size(1, 1) stride(1)
  %2 = accel.load wgt sram(0) dram(0) size(1, 1) stride(1)
  %3 = accel.load wgt sram(1) dram(1) size(1, 1) stride(1)
  %4 = accel.gemm @t0 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  %5 = accel.gemm @t1 out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
  accel.finish
}

// CHECK-LABEL: accel.program @interleaved
// CHECK:       accel.load inp sram(0) dram(0)
// CHECK-NEXT:  accel.load wgt sram(0) dram(0) {{.*}} flags(push_next)
// CHECK-NEXT:  accel.load inp sram(1) dram(1)
// CHECK-NEXT:  accel.load wgt sram(1) dram(1) {{.*}} flags(push_next)
// CHECK-NEXT:  accel.gemm @t0 {{.*}} flags(pop_prev)
// CHECK-NEXT:  accel.gemm @t1 {{.*}} flags(pop_prev)

// The serial ablation keeps the order it is given.
// SERIAL-LABEL: accel.program @interleaved
// SERIAL:       accel.load inp sram(0) dram(0)
// SERIAL-NEXT:  accel.load inp sram(1) dram(1)
