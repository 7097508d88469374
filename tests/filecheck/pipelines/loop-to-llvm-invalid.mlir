// RUN: tilecraft-opt %s --split-input-file -p loop-to-llvm --verify-diagnostics 2>&1 | filecheck %s

// A stage's diagnostic reaches the user as it is, at the op.
func.func @huge(%A: memref<100000xf32>, %x: f32) {
  // CHECK: loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: loop-unroll: the loop has 100000 iterations; unrolling more than 512 is refused — split it first or make it serial.
  loop.for %i = 0 to 100000 unrolled {
  }
  func.return
}

// -----

func.func @call_in_vector_loop(%A: memref<8xf32>) {
  loop.for %i = 0 to 8 vectorized {
    // CHECK: loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:5: error: loop-vectorize: 'func.call' cannot be vectorized; make the loop around it serial.
    func.call @k(%A) : (memref<8xf32>) -> ()
  }
  func.return
}
func.func @k(%A: memref<8xf32>) {
  func.return
}
