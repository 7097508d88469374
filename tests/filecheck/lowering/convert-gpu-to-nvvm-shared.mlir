// RUN: tilecraft-opt %s -p convert-loop-to-gpu,insert-gpu-barriers,convert-gpu-to-nvvm | filecheck %s

// A shared buffer becomes a global of address space 3 (one per block), used
// through a generic pointer; the barrier becomes llvm.nvvm.barrier0.
// CHECK:       llvm.func internal @rev_kernel0(
// CHECK-NOT:   llvm.alloca
// CHECK:       %[[G:.*]] = llvm.mlir.addressof @rev_kernel0_S_0 : !llvm.ptr<3>
// CHECK-NEXT:  %{{.*}} = llvmx.addrspacecast %[[G]] : !llvm.ptr<3> to !llvm.ptr
// CHECK:       llvm.store
// CHECK:       llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
// CHECK:       llvm.load
// CHECK:       llvm.mlir.global internal @rev_kernel0_S_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
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
