// RUN: tilecraft-opt %s --split-input-file -p loop-unroll --verify-diagnostics 2>&1 | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'loop-unroll{max-iterations=4}' --verify-diagnostics 2>&1 | filecheck %s --check-prefix=SMALL

// A huge unrolled loop is refused at the loop, not copied 100000 times.
func.func @huge(%A: memref<100000xf32>, %x: f32) {
  // CHECK: loop-unroll-invalid.mlir:[[# @LINE + 2]]:3: error: loop-unroll: the loop has 100000 iterations; unrolling more than 512 is refused — split it first or make it serial.
  // SMALL: loop-unroll-invalid.mlir:[[# @LINE + 1]]:3: error: loop-unroll: the loop has 100000 iterations; unrolling more than 4 is refused
  loop.for %i = 0 to 100000 unrolled {
    memref.store %x, %A[%i] : memref<100000xf32>
  }
  func.return
}

// -----

// The limit is an option: 8 iterations pass by default, not with max-iterations=4.
func.func @limit(%A: memref<8xf32>, %x: f32) {
  // CHECK-NOT: error
  // SMALL: loop-unroll-invalid.mlir:[[# @LINE + 1]]:3: error: loop-unroll: the loop has 8 iterations; unrolling more than 4 is refused
  loop.for %i = 0 to 8 unrolled {
    memref.store %x, %A[%i] : memref<8xf32>
  }
  func.return
}
