// RUN: tilecraft-opt %s -p loop-to-accel | filecheck %s
// RUN: tilecraft-opt %s -p "loop-to-accel{serial=true}" | filecheck %s --check-prefix=SERIAL
// The pipeline is its four passes, in order: the same output, byte for byte.
// RUN: tilecraft-opt %s -p loop-to-accel -o %t.pipeline
// RUN: tilecraft-opt %s -p inject-dma,inject-virtual-threads,convert-loop-to-accel,insert-dependences -o %t.passes
// RUN: diff %t.pipeline %t.passes

// A packed int8 GEMM (test_accel_build.py's packed_gemm(1, 2, 2, threads=2)) as
// tc.build(..., target="accel") lowers it: copies into the accelerator's buffers,
// the GEMM as a tensor intrinsic, two virtual threads over the output columns.
func.func @main(%A: memref<1x2x1x16xi8> {tc.name = "A"}, %W: memref<2x2x16x16xi8> {tc.name = "W"}, %R: memref<1x2x1x16xi8> {tc.name = "R"}) {
  %0 = arith.constant 0 : index
  loop.for %i1.outer = 0 to 2 vthread {
    %C = loop.alloc "C" acc_buffer : memref<1x1x1x16xi32>
    loop.for %i = 0 to 1 {
      loop.for %j = 0 to 1 {
        loop.for %x = 0 to 1 {
          loop.for %y = 0 to 16 {
            %1 = arith.constant 0 : i32
            memref.store %1, %C[%i, %j, %x, %y] : memref<1x1x1x16xi32>
          }
        }
      }
    }
    loop.for %k = 0 to 2 {
      %A.inp_buffer = loop.alloc "A.inp_buffer" inp_buffer : memref<1x1x1x16xi8>
      loop.for %ax0 = 0 to 1 {
        loop.for %ax1 = 0 to 1 {
          %ax1_1 = arith.addi %k, %ax1 : index
          loop.for %ax2 = 0 to 1 {
            loop.for %ax3 = 0 to 16 {
              %2 = memref.load %A[%ax0, %ax1_1, %ax2, %ax3] : memref<1x2x1x16xi8>
              memref.store %2, %A.inp_buffer[%ax0, %ax1, %ax2, %ax3] : memref<1x1x1x16xi8>
            }
          }
        }
      }
      %W.wgt_buffer = loop.alloc "W.wgt_buffer" wgt_buffer : memref<1x1x16x16xi8>
      loop.for %ax0_1 = 0 to 1 {
        %ax0_2 = arith.addi %i1.outer, %ax0_1 : index
        loop.for %ax1_2 = 0 to 1 {
          %ax1_3 = arith.addi %k, %ax1_2 : index
          loop.for %ax2_1 = 0 to 16 {
            loop.for %ax3_1 = 0 to 16 {
              %3 = memref.load %W[%ax0_2, %ax1_3, %ax2_1, %ax3_1] : memref<2x2x16x16xi8>
              memref.store %3, %W.wgt_buffer[%ax0_1, %ax1_2, %ax2_1, %ax3_1] : memref<1x1x16x16xi8>
            }
          }
        }
      }
      loop.for %i_1 = 0 to 1 {
        loop.for %j_1 = 0 to 1 {
          loop.tensor_intrin "gemv_1x16x16_i8" ins(%A.inp_buffer[%i_1, %0, %0, %0], %W.wgt_buffer[%j_1, %0, %0, %0]) outs(%C[%i_1, %j_1, %0, %0]) : memref<1x1x1x16xi8>, memref<1x1x16x16xi8>, memref<1x1x1x16xi32>
        }
      }
    }
    loop.for %i0 = 0 to 1 {
      loop.for %i1.inner = 0 to 1 {
        %i1 = arith.addi %i1.outer, %i1.inner : index
        loop.for %i2 = 0 to 1 {
          loop.for %i3 = 0 to 16 {
            %4 = memref.load %C[%i0, %i1.inner, %i2, %i3] : memref<1x1x1x16xi32>
            %5 = arith.trunci %4 : i32 to i8
            memref.store %5, %R[%i0, %i1, %i2, %i3] : memref<1x2x1x16xi8>
          }
        }
      }
    }
  }
  func.return
}

// The copies became DMA loads, the threads interleaved (thread 1's loads before
// thread 0's GEMM), and the queues synchronized by flags.
// CHECK:      accel.program @main {
// CHECK-NEXT:   accel.buffer @A inp dram(0) elems(2)
// CHECK-NEXT:   accel.buffer @W wgt dram(1) elems(4)
// CHECK-NEXT:   accel.buffer @R out dram(80) elems(2)
// CHECK-NOT:    loop.
// CHECK:        accel.load inp sram(0) dram(0) size(1, 1) stride(1)
// CHECK-NEXT:   accel.load wgt sram(0) dram(1) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT:   accel.load inp sram(1) dram(0) size(1, 1) stride(1)
// CHECK-NEXT:   accel.load wgt sram(1) dram(3) size(1, 1) stride(1) flags(push_next)
// CHECK-NEXT:   accel.gemm @k0 {{.*}} flags(pop_prev, push_prev)
// CHECK:        accel.store out sram(1) dram(81) size(1, 1) stride(1) flags(pop_prev, push_prev)
// CHECK-NEXT:   accel.finish flags(pop_next)

// serial=true: each instruction waits for the one before; no load overlaps a GEMM.
// SERIAL:      accel.gemm @k0 {{.*}} flags(pop_prev)
// SERIAL-NEXT: accel.gemm @k2 {{.*}} flags(push_prev)
// SERIAL-NEXT: accel.load inp sram(0) dram(1) size(1, 1) stride(1) flags(pop_next)
