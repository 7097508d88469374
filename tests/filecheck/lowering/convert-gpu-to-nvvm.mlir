// RUN: tilecraft-opt %s -p convert-loop-to-gpu,convert-gpu-to-nvvm | filecheck %s

// The kernel's body goes through the loop lowering; the GPU indices become
// reads of PTX's special registers (32-bit, zero-extended to the loop's i64).
// CHECK-LABEL: func.func @add
// CHECK:       "gpu.launch_func"
// CHECK:       llvm.func internal @add_kernel0(%A: !llvm.ptr {{{.*}}llvm.noalias{{.*}}}, %C: !llvm.ptr
// CHECK-SAME:  attributes {gpu.kernel
// CHECK:       %[[B:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
// CHECK-NEXT:  %{{.*}} = llvm.zext %[[B]] : i32 to i64
// CHECK:       %[[T:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:  %{{.*}} = llvm.zext %[[T]] : i32 to i64
// CHECK:       llvm.getelementptr inbounds %A
// CHECK:       llvm.store
// CHECK-NOT:   gpu.thread_id
func.func @add(%A: memref<256xf32>, %C: memref<256xf32>) {
  %c64 = arith.constant 64 : index
  loop.for %o = 0 to 4 blockIdx.x {
    %t = arith.muli %o, %c64 : index
    loop.for %in = 0 to 64 threadIdx.x {
      %i = arith.addi %t, %in : index
      %a = memref.load %A[%i] : memref<256xf32>
      %s = arith.addf %a, %a : f32
      memref.store %s, %C[%i] : memref<256xf32>
    }
  }
  func.return
}
