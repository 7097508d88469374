// RUN: not tilecraft-opt %s -p convert-graph-to-te,fold-constant-kernels 2>&1 | filecheck %s --check-prefix=ERR

// A folded value goes to the weight store, so the output IR must name a file.
// ERR: error: the passes changed the weight store; pass --weights-out PATH.npz
func.func @needs_a_store(%x: tensor<4xf32> {tc.name = "x"}) -> tensor<4xf32> {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %e = graph.exp %c : (tensor<4xf32>) -> tensor<4xf32>
  %y = graph.add %e, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
