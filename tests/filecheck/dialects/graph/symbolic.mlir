// Symbolic sizes in graph types: a `?` named by the type's encoding (one string
// per `?`: a name or an expression). Ops that take them carry them through;
// infer-shapes writes them into results.

// RUN: tilecraft-opt %s --split-input-file -p infer-shapes | filecheck %s

// dense, add (against a bias that broadcasts) and relu keep `batch`; an
// expression stays an expression.
func.func @mlp(%x: tensor<?x64xf32, ["batch"]>, %w: tensor<32x64xf32>, %b: tensor<32xf32>,
               %s: tensor<?x32xf32, ["seq * 12"]>) -> (tensor<*xf32>, tensor<*xf32>) {
  %d = graph.dense %x, %w : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<*xf32>
  %a = graph.add %d, %b : (tensor<*xf32>, tensor<32xf32>) -> tensor<*xf32>
  %r = graph.relu %a : (tensor<*xf32>) -> tensor<*xf32>
  %t = graph.tanh %s : (tensor<?x32xf32, ["seq * 12"]>) -> tensor<*xf32>
  func.return %r, %t : tensor<*xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:  -> (tensor<?x32xf32, ["batch"]>, tensor<?x32xf32, ["seq * 12"]>)
// CHECK:         %d = graph.dense %x, %w : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %a = graph.add %d, %b : (tensor<?x32xf32, ["batch"]>, tensor<32xf32>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %r = graph.relu %a : (tensor<?x32xf32, ["batch"]>) -> tensor<?x32xf32, ["batch"]>
// CHECK-NEXT:    %t = graph.tanh %s : (tensor<?x32xf32, ["seq * 12"]>) -> tensor<?x32xf32, ["seq * 12"]>

// -----

// Two operands of one size broadcast; a size of 1 broadcasts to `batch`.
func.func @broadcast(%x: tensor<?x8xf32, ["batch"]>, %y: tensor<?x8xf32, ["batch"]>, %o: tensor<1x8xf32>) -> tensor<*xf32> {
  %a = graph.mul %x, %y : (tensor<?x8xf32, ["batch"]>, tensor<?x8xf32, ["batch"]>) -> tensor<*xf32>
  %b = graph.sub %a, %o : (tensor<*xf32>, tensor<1x8xf32>) -> tensor<*xf32>
  func.return %b : tensor<*xf32>
}

// CHECK-LABEL: func.func @broadcast(
// CHECK:         %b = graph.sub %a, %o : (tensor<?x8xf32, ["batch"]>, tensor<1x8xf32>) -> tensor<?x8xf32, ["batch"]>
