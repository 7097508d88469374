// The reductions of the ONNX Reduce* family that are graph ops of their own (min,
// prod) and the running sum/product: printed, parsed again, printed identically.
// RUN: %roundtrip
// RUN: %generic-roundtrip
// RUN: tilecraft-opt %s | filecheck %s

func.func @reduce_min_prod(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = graph.reduce_prod %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %2 = graph.reduce_prod %x : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  func.return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @reduce_min_prod(
// CHECK-NEXT:    graph.reduce_min %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    graph.reduce_prod %{{.*}} {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// No axes: all of them, kept as 1s by default.
// CHECK-NEXT:    graph.reduce_prod %{{.*}} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>

func.func @cumulative(%x: tensor<2x5xf32>, %i: tensor<7xi64>) -> tensor<2x5xf32> {
  %0 = graph.cumulative %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = graph.cumulative %x {axis = 0 : i64, kind = "prod", exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = graph.cumulative %i : (tensor<7xi64>) -> tensor<7xi64>
  func.return %1 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @cumulative(
// CHECK-NEXT:    graph.cumulative %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    graph.cumulative %{{.*}} {axis = 0 : i64, kind = "prod", exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    graph.cumulative %{{.*}} : (tensor<7xi64>) -> tensor<7xi64>
