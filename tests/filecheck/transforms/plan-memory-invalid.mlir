// RUN: tilecraft-opt %s --split-input-file -p plan-memory --verify-diagnostics 2>&1 | filecheck %s

// A value without a static shape has no size to plan.
func.func @unranked(%x: tensor<4xf32>) -> tensor<*xf32> {
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: cannot plan memory for tensor<*xf32>: its shape must be static (run infer-shapes)
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<*xf32>
  func.return %e : tensor<*xf32>
}
