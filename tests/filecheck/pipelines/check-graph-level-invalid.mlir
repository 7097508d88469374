// RUN: tilecraft-opt %s --split-input-file -p check-graph-level --verify-diagnostics 2>&1 | filecheck %s --check-prefixes=CHECK,ALONE
// RUN: tilecraft-opt %s --split-input-file -p compile-model --verify-diagnostics 2>&1 | filecheck %s --check-prefixes=CHECK,MODEL

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

// -----

// An op on an empty tensor: compile-model's fold-empty-tensors folds the relu away,
// so only check-graph-level alone reports it (at the op reading the argument).
// MODEL-NOT: error: check-graph-level: 'graph.relu'
// ALONE: check-graph-level-invalid.mlir:[[# @LINE + 2]]:3: error: check-graph-level: 'graph.relu' reads argument #1 of @relu, an empty tensor (tensor<0x3xf32>); run fold-empty-tensors first, which replaces empty tensors by constants
func.func @relu(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %r = graph.relu %x : (tensor<0x3xf32>) -> tensor<0x3xf32>
  func.return %r : tensor<0x3xf32>
}

// -----

// One it cannot fold (the bias is not known) is reported either way.
// MODEL: check-graph-level-invalid.mlir:[[# @LINE + 3]]:3: error: check-graph-level: 'graph.conv2d' on an empty tensor (tensor<1x0x4x4xf32>) is not supported: tilecraft compiles ops on empty tensors only where fold-empty-tensors (compile-model's first stage) folds them away
// ALONE: check-graph-level-invalid.mlir:[[# @LINE + 2]]:3: error: check-graph-level: 'graph.conv2d' reads argument #1 of @conv
func.func @conv(%x: tensor<1x0x4x4xf32>, %w: tensor<2x0x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %y = graph.conv2d %x, %w, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
