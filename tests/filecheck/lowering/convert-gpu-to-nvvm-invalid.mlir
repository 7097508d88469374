// RUN: tilecraft-opt %s -p convert-loop-to-gpu,convert-gpu-to-nvvm --split-input-file --verify-diagnostics | filecheck %s

// f64 exp would call libm's exp, which a GPU does not have.
// CHECK: convert-gpu-to-nvvm: 'math.exp' on f64 has no GPU lowering yet (a kernel has no libm or libdevice, and it is written out for f32 only): compute it in f32, where cos, erf, exp, exp2, log, log10, log2, powf, sin, tanh are, or on the CPU.
func.func @exp64(%A: memref<64xf64>) {
  loop.for %t = 0 to 64 threadIdx.x {
    %a = memref.load %A[%t] : memref<64xf64>
    %e = math.exp %a : f64
    memref.store %e, %A[%t] : memref<64xf64>
  }
  func.return
}

// -----

// tan is not written out in any type.
// CHECK: convert-gpu-to-nvvm: 'math.tan' on f32 has no GPU lowering yet (a kernel has no libm or libdevice, and it is not written out)
func.func @tan32(%A: memref<64xf32>) {
  loop.for %t = 0 to 64 threadIdx.x {
    %a = memref.load %A[%t] : memref<64xf32>
    %e = math.tan %a : f32
    memref.store %e, %A[%t] : memref<64xf32>
  }
  func.return
}

// -----

// CHECK: convert-gpu-to-nvvm: a kernel cannot allocate a global buffer
func.func @heap(%A: memref<64xf32>) {
  loop.for %t = 0 to 64 threadIdx.x {
    %buf = loop.alloc "tmp" global : memref<1024xf32>
    %a = memref.load %A[%t] : memref<64xf32>
    memref.store %a, %buf[%t] : memref<1024xf32>
  }
  func.return
}

// -----

// (a vectorized loop is vector code: convert-gpu-to-nvvm-vector.mlir; a
// parallel one is not for a thread)
// CHECK: convert-gpu-to-nvvm: a parallel loop inside a kernel is not supported
func.func @parallel(%A: memref<64x8xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %t = 0 to 64 threadIdx.x {
    loop.for %v = 0 to 8 parallel {
      memref.store %one, %A[%t, %v] : memref<64x8xf32>
    }
  }
  func.return
}
