// RUN: tilecraft-opt %s -p convert-loop-to-gpu,convert-gpu-to-nvvm | filecheck %s

// A kernel has no libm to call: f32 log, sin and pow are written out in
// arithmetic (backends/nvptx/mathlib.py), so nothing is called.
// CHECK-LABEL: llvm.func internal @math_kernel0
// CHECK-NOT:   llvm.call @
// log: the exponent from the float's bits
// CHECK:       %[[BITS:.*]] = llvm.bitcast %{{.*}} : f32 to i32
// CHECK:       llvm.lshr %[[BITS]], %{{.*}} : i32
// sin: the octant of |x| / (pi/4)
// CHECK:       llvmx.fptosi %{{.*}} : f32 to i32
// CHECK-NOT:   llvm.call @
// CHECK-NOT:   math.
// CHECK:       llvm.return
func.func @math(%A: memref<256xf32>, %C: memref<256xf32>) {
  %c64 = arith.constant 64 : index
  loop.for %o = 0 to 4 blockIdx.x {
    %t = arith.muli %o, %c64 : index
    loop.for %in = 0 to 64 threadIdx.x {
      %i = arith.addi %t, %in : index
      %a = memref.load %A[%i] : memref<256xf32>
      %l = math.log %a : f32
      %s = math.sin %l : f32
      %p = math.powf %s, %a : f32
      memref.store %p, %C[%i] : memref<256xf32>
    }
  }
  func.return
}
