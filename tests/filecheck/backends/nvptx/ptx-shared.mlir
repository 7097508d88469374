// RUN: tilecraft-translate %s --emit=ptx --arch=sm_90 | filecheck %s

// A block reverses 64 floats through shared memory: a .shared array, stored to,
// a barrier, loaded from.
// CHECK-LABEL: .visible .entry rev_kernel0(
// CHECK:       .shared .align 16 .b8 rev_kernel0_S_0[256];
// CHECK:       st.shared.b32
// CHECK:       bar.sync 0;
// CHECK:       ld.shared.b32
func.func @rev(%A: memref<64xf32>, %C: memref<64xf32>) {
  loop.for %b = 0 to 1 blockIdx.x {
    %S = loop.alloc "S" shared : memref<64xf32>
    loop.for %t = 0 to 64 threadIdx.x {
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %S[%t] : memref<64xf32>
    }
    loop.for %t2 = 0 to 64 threadIdx.x {
      %c63 = arith.constant 63 : index
      %m = arith.subi %c63, %t2 : index
      %s = memref.load %S[%m] : memref<64xf32>
      memref.store %s, %C[%t2] : memref<64xf32>
    }
  }
  func.return
}
