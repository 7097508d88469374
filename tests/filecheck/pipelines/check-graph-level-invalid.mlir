// RUN: tilecraft-opt %s --split-input-file -p check-graph-level --verify-diagnostics 2>&1 | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p compile-model --verify-diagnostics 2>&1 | filecheck %s

// A te function is not a model: say so and name what lowers it.
// CHECK: check-graph-level-invalid.mlir:[[# @LINE + 1]]:1: error: check-graph-level: @add is te-level IR, and compile-model takes graph IR (an imported model); lower te with -p te-inline,convert-te-to-loop
func.func @add(%A: tensor<8xf32>, %B: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %b = te.read %B[%i] : tensor<8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}

// -----

// CHECK: check-graph-level-invalid.mlir:[[# @LINE + 1]]:1: error: check-graph-level: @copy is loop-level IR, and compile-model takes graph IR (an imported model); run loop IR with tilecraft-run or translate it with tilecraft-translate
func.func @copy(%In: memref<100xf32>, %Out: memref<100xf32>) {
  loop.for %i = 0 to 100 {
    %v = memref.load %In[%i] : memref<100xf32>
    memref.store %v, %Out[%i] : memref<100xf32>
  }
  func.return
}
