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
  %1 = graph.cumulative %x {axis = 0 : i64, kind = #graph<cumulative_kind prod>, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = graph.cumulative %i : (tensor<7xi64>) -> tensor<7xi64>
  func.return %1 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @cumulative(
// CHECK-NEXT:    graph.cumulative %{{.*}} {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    graph.cumulative %{{.*}} {axis = 0 : i64, kind = #graph<cumulative_kind prod>, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    graph.cumulative %{{.*}} : (tensor<7xi64>) -> tensor<7xi64>

// Gathers and scatters by element (ONNX GatherElements, GatherND, ScatterElements, ScatterND).
func.func @gather_scatter(%x: tensor<4x5xf32>, %ids: tensor<3x2xi64>, %upd: tensor<3x2xf32>, %nd: tensor<2x1xi64>, %rows: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %0 = graph.gather_elements %x, %ids {axis = 1 : i64} : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %1 = graph.gather_nd %x, %ids : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %2 = graph.scatter_elements %x, %ids, %upd {reduction = #graph<scatter_reduction add>} : (tensor<4x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<4x5xf32>
  %3 = graph.scatter_nd %x, %nd, %rows : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  func.return %3 : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @gather_scatter(
// CHECK-NEXT:    graph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
// Each row of 2 ids picks one element.
// CHECK-NEXT:    graph.gather_nd %{{.*}}, %{{.*}} : (tensor<4x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
// CHECK-NEXT:    graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {reduction = #graph<scatter_reduction add>} : (tensor<4x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
