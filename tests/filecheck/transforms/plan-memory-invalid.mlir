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

// -----

// An in-place concat (concat-in-place) holds its operands in its buffer: each must
// be a kernel's result, in no other in-place concat, not returned.
func.func @in_place_argument(%x: tensor<1x16xf32>) -> tensor<1x32xf32> {
  %e = graph.fused "fused_exp" (%x) : (tensor<1x16xf32>) -> (tensor<1x16xf32>) {
  ^bb0(%a: tensor<1x16xf32>):
    %r = graph.exp %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
    graph.yield %r : tensor<1x16xf32>
  }
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: the in-place concat's operand x is not a kernel's result
  %c = graph.concat %x, %e {axis = 1 : i64, tc.in_place} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  %n = graph.fused "fused_neg" (%c) : (tensor<1x32xf32>) -> (tensor<1x32xf32>) {
  ^bb0(%a: tensor<1x32xf32>):
    %r = graph.neg %a : (tensor<1x32xf32>) -> tensor<1x32xf32>
    graph.yield %r : tensor<1x32xf32>
  }
  func.return %n : tensor<1x32xf32>
}

// -----

func.func @in_place_twice(%x: tensor<1x16xf32>) -> tensor<1x32xf32> {
  %e = graph.fused "fused_exp" (%x) : (tensor<1x16xf32>) -> (tensor<1x16xf32>) {
  ^bb0(%a: tensor<1x16xf32>):
    %r = graph.exp %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
    graph.yield %r : tensor<1x16xf32>
  }
  %f = graph.fused "fused_neg" (%x) : (tensor<1x16xf32>) -> (tensor<1x16xf32>) {
  ^bb0(%a: tensor<1x16xf32>):
    %r = graph.neg %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
    graph.yield %r : tensor<1x16xf32>
  }
  %c = graph.concat %e, %f {axis = 1 : i64, tc.in_place} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: the in-place concat's operand f is a part of another in-place concat
  %d = graph.concat %f, %e {axis = 1 : i64, tc.in_place} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  %s = graph.fused "fused_add" (%c, %d) : (tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>) {
  ^bb0(%a: tensor<1x32xf32>, %b: tensor<1x32xf32>):
    %r = graph.add %a, %b : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
    graph.yield %r : tensor<1x32xf32>
  }
  func.return %s : tensor<1x32xf32>
}

// -----

// Two images: each operand is two runs of the concat's buffer, not one.
func.func @in_place_strided(%x: tensor<2x16xf32>) -> tensor<2x32xf32> {
  %e = graph.fused "fused_exp" (%x) : (tensor<2x16xf32>) -> (tensor<2x16xf32>) {
  ^bb0(%a: tensor<2x16xf32>):
    %r = graph.exp %a : (tensor<2x16xf32>) -> tensor<2x16xf32>
    graph.yield %r : tensor<2x16xf32>
  }
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: an in-place concat's operands must be contiguous runs of its buffer at multiples of 64 bytes (every axis before the concat axis of extent 1)
  %c = graph.concat %e, %e {axis = 1 : i64, tc.in_place} : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x32xf32>
  %n = graph.fused "fused_neg" (%c) : (tensor<2x32xf32>) -> (tensor<2x32xf32>) {
  ^bb0(%a: tensor<2x32xf32>):
    %r = graph.neg %a : (tensor<2x32xf32>) -> tensor<2x32xf32>
    graph.yield %r : tensor<2x32xf32>
  }
  func.return %n : tensor<2x32xf32>
}

// -----

func.func @in_place_returned(%x: tensor<1x16xf32>) -> tensor<1x32xf32> {
  %e = graph.fused "fused_exp" (%x) : (tensor<1x16xf32>) -> (tensor<1x16xf32>) {
  ^bb0(%a: tensor<1x16xf32>):
    %r = graph.exp %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
    graph.yield %r : tensor<1x16xf32>
  }
  %f = graph.fused "fused_neg" (%x) : (tensor<1x16xf32>) -> (tensor<1x16xf32>) {
  ^bb0(%a: tensor<1x16xf32>):
    %r = graph.neg %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
    graph.yield %r : tensor<1x16xf32>
  }
  // CHECK: plan-memory-invalid.mlir:[[# @LINE + 1]]:3: error: plan-memory: an in-place concat cannot be a result of the function
  %c = graph.concat %e, %f {axis = 1 : i64, tc.in_place} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  func.return %c : tensor<1x32xf32>
}
