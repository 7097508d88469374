// RUN: tilecraft-opt %s --split-input-file -p inject-virtual-threads --verify-diagnostics 2>&1 | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'inject-virtual-threads{max-threads=2}' --verify-diagnostics 2>&1 | filecheck %s --check-prefix=TWO

// Every statement is copied per thread: 32 threads are refused.
func.func @many(%A: memref<32xf32>, %x: f32) {
  // CHECK: inject-virtual-threads-invalid.mlir:[[# @LINE + 2]]:3: error: inject-virtual-threads: 32 virtual threads, more than max-threads=16; each statement is emitted once per thread: bind a shorter axis (split it first)
  // TWO: error: inject-virtual-threads: 32 virtual threads, more than max-threads=2
  loop.for %t = 0 to 32 vthread {
    memref.store %x, %A[%t] : memref<32xf32>
  }
  func.return
}

// -----

// The limit is an option: 4 threads pass by default, not with max-threads=2.
func.func @four(%A: memref<4xf32>, %x: f32) {
  // CHECK-NOT: error
  // TWO: error: inject-virtual-threads: 4 virtual threads, more than max-threads=2
  loop.for %t = 0 to 4 vthread {
    memref.store %x, %A[%t] : memref<4xf32>
  }
  func.return
}
