// RUN: tilecraft-opt %s --split-input-file -p plan-memory --verify-diagnostics 2>&1 | filecheck %s

// A value without a static shape has no size to plan.
func.func @unranked(%x: tensor<4xf32>) -> tensor<*xf32> {
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: cannot plan memory for tensor<*xf32>: its shape must be static (run infer-shapes)
  %e = graph.fused "fused_exp" (%x) : (tensor<4xf32>) -> (tensor<*xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.exp %a : (tensor<4xf32>) -> tensor<*xf32>
    graph.yield %r : tensor<*xf32>
  }
  func.return %e : tensor<*xf32>
}

// -----

// Memory is planned for kernels: an op in no fused group is an error (its
// offsets would be lost when it is wrapped in a group later).
func.func @ungrouped(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: graph.exp is in no fused group; run fuse-ops first (fuse-ops{enabled=false} puts every op in a group of its own)
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = graph.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}
