// RUN: tilecraft-translate %s --emit=ptx --arch=sm_90 | filecheck %s

// A vector add of 1000 on blocks of 64: one .entry whose pointers are in the
// global space, indexed by the block and thread registers, under the tail guard.
// CHECK:       .version 7.8
// CHECK-NEXT:  .target sm_90
// CHECK:       .visible .entry add_kernel0(
// CHECK-NEXT:  .param .u64 .ptr .global
// CHECK:       %ctaid.x
// CHECK:       %tid.x
// CHECK:       setp.gt.u64 {{.*}}, 999;
// CHECK:       ld.global
// CHECK:       ld.global
// CHECK:       add.f32
// CHECK:       st.global.b32
// CHECK:       ret;
func.func @add(%A: memref<1000xf32>, %B: memref<1000xf32>, %C: memref<1000xf32>) {
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  loop.for %o = 0 to 16 blockIdx.x {
    %t = arith.muli %o, %c64 : index
    loop.for %in = 0 to 64 threadIdx.x {
      %i = arith.addi %t, %in : index
      %ok = arith.cmpi slt, %i, %c1000 : index
      loop.guard %ok {
        %a = memref.load %A[%i] : memref<1000xf32>
        %b = memref.load %B[%i] : memref<1000xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %C[%i] : memref<1000xf32>
      }
    }
  }
  func.return
}
