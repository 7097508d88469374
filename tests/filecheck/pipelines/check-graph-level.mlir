// RUN: tilecraft-opt %s -p check-graph-level | filecheck %s

// Graph IR passes unchanged (compile-model's first stage checks only).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %{{.*}} = graph.relu %x
// CHECK-NEXT:    func.return
func.func @main(%x: tensor<4xf32> {tc.name = "x"}) -> tensor<4xf32> {
  %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
