// RUN: tilecraft-opt %s --split-input-file -p convert-loop-to-llvm --verify-diagnostics 2>&1 | filecheck %s

// An op the backend has no lowering for is named, with where it is.
func.func @unsupported_op(%A: memref<4xf32>) {
  loop.for %i = 0 to 4 {
    %a = memref.load %A[%i] : memref<4xf32>
    // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:5: error: convert-loop-to-llvm: 'math.cbrt' is not supported; lower it to loop, memref, scf.if, arith or math ops first.
    %b = math.cbrt %a : f32
    memref.store %b, %A[%i] : memref<4xf32>
  }
  func.return
}

// -----

// Kernels take buffers only.
// CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:1: error: convert-loop-to-llvm: argument #2 of 'scalar_argument' has type f32; only memrefs are supported.
func.func @scalar_argument(%A: memref<4xf32>, %x: f32) {
  func.return
}

// -----

// Results are written to output buffers, not returned.
// CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:1: error: convert-loop-to-llvm: functions return nothing; write results to output memref arguments.
func.func @returns_value(%A: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.load %A[%c0] : memref<4xf32>
  func.return %a : f32
}

// -----

// Vector constants are 1-D (what loop-vectorize writes).
func.func @vector_constant(%A: memref<4xf32>) {
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: only scalar and 1-D vector constants are supported, not dense<1.000000e+00> : vector<2x2xf32>.
  %v = arith.constant dense<1.0> : vector<2x2xf32>
  func.return
}

// -----

// Calls follow the loop calling convention: memrefs in, nothing returned.
func.func @call_with_result(%A: memref<4xf32>) {
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: a call passes memrefs and returns nothing (the loop calling convention).
  %r = func.call @f(%A) : (memref<4xf32>) -> index
  func.return
}
func.func @f(%A: memref<4xf32>) -> index {
  %c = arith.constant 0 : index
  func.return %c : index
}

// -----

// Vectorizing and outlining are passes of their own, run before this one.
func.func @vectorized_left(%A: memref<4xf32>) {
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: a vectorized loop is left; run loop-vectorize first.
  loop.for %i = 0 to 4 vectorized {
  }
  func.return
}

// -----

func.func @parallel_left(%A: memref<4xf32>) {
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: a parallel loop is left; run loop-outline-parallel first.
  loop.for %i = 0 to 4 parallel {
  }
  func.return
}

// -----

// scf.for appears only as the chunk loop of an outlined body: step 1.
func.func private @chunk(%A: memref<4xf32>, %begin: index, %end: index) {
  %c2 = arith.constant 2 : index
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: only scf.for with step 1 and no loop-carried values is supported.
  scf.for %i = %begin to %end step %c2 {
  }
  func.return
}

// -----

// A launch's thread cap is a count of threads: at least one.
func.func @zero_threads(%A: memref<64xf32>) {
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: tc.max_threads must be a positive integer (the most threads the launch may use), not 0 : i64.
  loop.launch @zero_threads_parallel0(%A) 0 to 64 {tc.max_threads = 0 : i64} : memref<64xf32>
  func.return
}
func.func private @zero_threads_parallel0(%A: memref<64xf32>, %begin: index, %end: index) {
  func.return
}

// -----

// `tc.dims` names each `?` size of its memref, no more and no fewer.
// CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:1: error: convert-loop-to-llvm: tc.dims of argument #1 of 'too_many_names' names 2 sizes; memref<?x8xf32> has 1 '?' dimensions.
func.func @too_many_names(%A: memref<?x8xf32> {tc.dims = ["m", "n"]}) {
  func.return
}

// -----

// A size name is an expression of names (`batch * seq`), checked here.
// CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:1: error: convert-loop-to-llvm: tc.dims of argument #1 of 'bad_name': {{.*}}
func.func @bad_name(%A: memref<?xf32> {tc.dims = ["n +"]}) {
  func.return
}

// -----

// memref.dim reads a size the function was given: the dimension is a constant.
func.func @dim_of_a_variable(%A: memref<?xf32>, %B: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %k = memref.load %B[%c0] : memref<1xindex>
  // CHECK: convert-loop-to-llvm-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-llvm: memref.dim takes a constant dimension of the memref's rank.
  %n = memref.dim %A, %k : memref<?xf32>
  func.return
}
