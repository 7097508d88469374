// RUN: tilecraft-opt %s --split-input-file -p loop-outline-parallel --verify-diagnostics 2>&1 | filecheck %s
// RUN: not tilecraft-opt %s -p 'loop-outline-parallel{thread-cost=-5}' 2>&1 | filecheck %s --check-prefix=COST

// COST: error: loop-outline-parallel: thread-cost must be 0 (no cap) or a positive number of work units, not -5.

// Only a loop in a function can become a function and a launch.
// CHECK: loop-outline-parallel-invalid.mlir:[[# @LINE + 1]]:1: error: loop-outline-parallel: a parallel loop outside a function cannot be outlined.
loop.for %i = 0 to 8 parallel {
}

// -----

// The body's arguments are what the runtime passes through its context: a
// value of another type (here a vector) cannot be captured.
func.func @vector_capture(%A: memref<8xf32>) {
  %v = "test.op"() : () -> vector<4xf32>
  // CHECK: loop-outline-parallel-invalid.mlir:[[# @LINE + 1]]:3: error: loop-outline-parallel: the loop uses a value of type vector<4xf32> defined outside it; only memrefs, integers, indices and floats can be passed to its outlined body.
  loop.for %i = 0 to 8 parallel {
    "test.op"(%v) : (vector<4xf32>) -> ()
  }
  func.return
}

// -----

// A cap the loop carries is a count of threads: at least one.
func.func @zero_threads(%A: memref<8xf32>) {
  // CHECK: loop-outline-parallel-invalid.mlir:[[# @LINE + 1]]:3: error: loop-outline-parallel: tc.max_threads must be a positive integer (the most threads the loop may run on), not -2 : i64.
  loop.for %i = 0 to 8 parallel {
    %a = memref.load %A[%i] : memref<8xf32>
    memref.store %a, %A[%i] : memref<8xf32>
  } {tc.max_threads = -2}
  func.return
}
