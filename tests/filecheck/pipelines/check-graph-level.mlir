// RUN: tilecraft-opt %s -p check-graph-level | filecheck %s

// Graph IR passes unchanged (compile-model's first stage checks only).
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %{{.*}} = graph.relu %x
// CHECK-NEXT:    func.return
func.func @main(%x: tensor<4xf32> {tc.name = "x"}) -> tensor<4xf32> {
  %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// What fold-empty-tensors leaves compiles: an empty argument nothing reads, an
// empty constant returned.
// CHECK-LABEL: func.func @empty
// CHECK-NEXT:    %{{.*}} = graph.constant dense<> : tensor<0x3xf32>
// CHECK-NEXT:    func.return
func.func @empty(%x: tensor<0x3xf32> {tc.name = "x"}) -> tensor<0x3xf32> {
  %c = graph.constant dense<> : tensor<0x3xf32>
  func.return %c : tensor<0x3xf32>
}
