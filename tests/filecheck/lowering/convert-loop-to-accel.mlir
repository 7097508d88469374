// RUN: tilecraft-opt %s -p convert-loop-to-accel | filecheck %s
// RUN: tilecraft-opt %s -p convert-loop-to-accel,insert-dependences | filecheck %s --check-prefix=DEPS

// A packed int8 GEMM scheduled for the accelerator (inputs and weights cache_read
// into their buffers per reduction step, the accumulator set_scope, relu and the
// narrowing in a cache_write stage), after inject-dma: the host loops unroll into
// a straight stream; the GEMM nest is one instruction over a one-uop kernel, the
// zero-fill a GEMM reset, the relu an ALU MAX computed in place (the accumulator
// dies where the relu's buffer is born: they share their SRAM range).
builtin.module {
  func.func @main(%A: memref<2x2x1x16xi8> {tc.name = "A"}, %W: memref<1x2x16x16xi8> {tc.name = "W"}, %R: memref<2x1x1x16xi8> {tc.name = "R"}) {
    %C = loop.alloc "C" acc_buffer : memref<2x1x1x16xi32>
    %R.acc_buffer = loop.alloc "R.acc_buffer" acc_buffer : memref<2x1x1x16xi8>
    loop.for %i = 0 to 2 {
      loop.for %j = 0 to 1 {
        loop.for %x = 0 to 1 {
          loop.for %y = 0 to 16 {
            %0 = arith.constant 0 : i32
            memref.store %0, %C[%i, %j, %x, %y] : memref<2x1x1x16xi32>
          }
        }
      }
    }
    %1 = arith.constant 0 : index
    loop.for %k = 0 to 2 {
      %A.inp_buffer = loop.alloc "A.inp_buffer" inp_buffer : memref<2x1x1x16xi8>
      %2 = arith.constant 0 : index
      %3 = arith.constant 2 : index
      %4 = arith.constant 1 : index
      loop.dma %A[%2, %k, %2, %2] -> %A.inp_buffer[%2, %2, %2, %2] size(%3, %4) pad(%2, %2, %2, %2) stride 2 tile 2 x 1 elem 16 : memref<2x2x1x16xi8> -> memref<2x1x1x16xi8>
      %W.wgt_buffer = loop.alloc "W.wgt_buffer" wgt_buffer : memref<1x1x16x16xi8>
      %5 = arith.constant 0 : index
      %6 = arith.constant 1 : index
      loop.dma %W[%5, %k, %5, %5] -> %W.wgt_buffer[%5, %5, %5, %5] size(%6, %6) pad(%5, %5, %5, %5) stride 1 tile 1 x 1 elem 256 : memref<1x2x16x16xi8> -> memref<1x1x16x16xi8>
      loop.for %i_1 = 0 to 2 {
        loop.for %j_1 = 0 to 1 {
          loop.tensor_intrin "gemv_1x16x16_i8" ins(%A.inp_buffer[%i_1, %1, %1, %1], %W.wgt_buffer[%j_1, %1, %1, %1]) outs(%C[%i_1, %j_1, %1, %1]) : memref<2x1x1x16xi8>, memref<1x1x16x16xi8>, memref<2x1x1x16xi32>
        }
      }
    }
    loop.for %i0 = 0 to 2 {
      loop.for %i1 = 0 to 1 {
        loop.for %i2 = 0 to 1 {
          loop.for %i3 = 0 to 16 {
            %7 = memref.load %C[%i0, %i1, %i2, %i3] : memref<2x1x1x16xi32>
            %8 = arith.constant 0 : i32
            %9 = arith.maxsi %7, %8 : i32
            %10 = arith.trunci %9 : i32 to i8
            memref.store %10, %R.acc_buffer[%i0, %i1, %i2, %i3] : memref<2x1x1x16xi8>
          }
        }
      }
    }
    %11 = arith.constant 0 : index
    %12 = arith.constant 1 : index
    %13 = arith.constant 2 : index
    loop.dma %R.acc_buffer[%11, %11, %11, %11] -> %R[%11, %11, %11, %11] size(%12, %13) pad(%11, %11, %11, %11) stride 2 tile 1 x 2 elem 16 : memref<2x1x1x16xi8> -> memref<2x1x1x16xi8>
    func.return
  }
}

// CHECK:      accel.program @main {
// CHECK-NEXT:   accel.buffer @A inp dram(0) elems(4)
// CHECK-NEXT:   accel.buffer @W wgt dram(1) elems(2)
// CHECK-NEXT:   accel.buffer @R out dram(48) elems(2)
// CHECK-NEXT:   accel.uop_kernel @k0 {
// CHECK-NEXT:     accel.uop 0, 0, 0
// CHECK-NEXT:   }
// CHECK-NEXT:   accel.gemm reset @k0 out 1 in 2 dst(0, 1) src(0, 0) wgt(0, 0)
// CHECK-NEXT:   accel.load inp sram(0) dram(0) size(2, 1) stride(2)
// CHECK-NEXT:   accel.load wgt sram(0) dram(1) size(1, 1) stride(1)
// CHECK-NEXT:   accel.gemm @k0 out 1 in 2 dst(0, 1) src(0, 1) wgt(0, 0)
// CHECK-NEXT:   accel.load inp sram(0) dram(1) size(2, 1) stride(2)
// CHECK-NEXT:   accel.load wgt sram(0) dram(2) size(1, 1) stride(1)
// CHECK-NEXT:   accel.gemm @k0 out 1 in 2 dst(0, 1) src(0, 1) wgt(0, 0)
// CHECK-NEXT:   accel.alu max imm(0) @k0 out 1 in 2 dst(0, 1) src(0, 1)
// CHECK-NEXT:   accel.store out sram(0) dram(48) size(1, 2) stride(2)
// CHECK-NEXT:   accel.finish
// CHECK-NEXT: }

// The flags order every hazard between modules: the weights' load releases the
// GEMM (RAW), the GEMM releases the input buffer to the next load (WAR), the last
// ALU releases the store, the store the FINISH.
// DEPS:      accel.load wgt sram(0) dram(1) size(1, 1) stride(1) flags(push_next)
// DEPS-NEXT: accel.gemm @k0 {{.*}} flags(pop_prev, push_prev)
// DEPS-NEXT: accel.load inp sram(0) dram(1) size(2, 1) stride(2) flags(pop_next)
// DEPS-NEXT: accel.load wgt sram(0) dram(2) size(1, 1) stride(1) flags(push_next)
// DEPS-NEXT: accel.gemm @k0 {{.*}} flags(pop_prev)
// DEPS:      accel.alu max imm(0) {{.*}} flags(push_next)
// DEPS-NEXT: accel.store out {{.*}} flags(pop_prev, push_prev)
// DEPS-NEXT: accel.finish flags(pop_next)
