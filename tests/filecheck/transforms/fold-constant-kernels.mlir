// RUN: rm -rf %t && mkdir -p %t
// RUN: tilecraft-opt %s --split-input-file -p convert-graph-to-te,fold-constant-kernels --weights-out %t/w.npz | filecheck %s
// The weights file holds the second case's folded value, exp(2) transposed.
// RUN: python -c "import numpy as np; d = np.load('%t/w.npz'); print(sorted(d)); np.testing.assert_allclose(d['transpose_1.result0'], np.full((8, 4), np.exp(2.0)), rtol=1e-6); print('values ok')" | filecheck %s --check-prefix=VALUES

// A kernel with only constant inputs (here a small constant inlined into it, so
// it has no arguments at all) is evaluated once; its call becomes a weight, and
// the kernel, called by nobody now, is gone.
// CHECK-LABEL: func.func @small_constant
// (convert-graph-to-te leaves the inlined constant behind, for dce.)
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    %[[T:.*]] = graph.weight "transpose_0.result0" : tensor<3x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = func.call @add_1(%x, %[[T]])
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:   func.func @transpose_0
// CHECK:       func.func @add_1(
func.func @small_constant(%x: tensor<3x2xf32> {tc.name = "x"}) -> tensor<3x2xf32> {
  %c = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = graph.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = graph.add %x, %t : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

// A constant passed as an argument (too big to inline) folds the same way, and
// so does the kernel it then feeds; the call that reads a function argument
// stays, and the dead constant goes.
// CHECK-LABEL: func.func @big_constant
// CHECK-NEXT:    %[[W:.*]] = graph.weight "transpose_1.result0" : tensor<8x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = func.call @mul_2(%x, %[[W]])
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:   func.func @exp_0
// CHECK-NOT:   func.func @transpose_1
// CHECK:       func.func @mul_2(
func.func @big_constant(%x: tensor<8x4xf32> {tc.name = "x"}) -> tensor<8x4xf32> {
  %c = graph.constant dense<2.0> : tensor<4x8xf32>
  %e = graph.exp %c : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.transpose %e {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %y = graph.mul %x, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// -----

// Nothing to fold: every kernel reads a function argument, so the pass leaves
// the calls, and the weight store, alone (no --weights-out needed).
// CHECK-LABEL: func.func @nothing_constant
// CHECK-NEXT:    %[[E:.*]] = func.call @exp_0(%x)
// CHECK-NEXT:    %[[Y:.*]] = func.call @add_1(%[[E]], %x)
// CHECK-NEXT:    func.return %[[Y]]
func.func @nothing_constant(%x: tensor<4xf32> {tc.name = "x"}) -> tensor<4xf32> {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %y = graph.add %e, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A te function nobody calls is the user's, not a folded kernel: it stays.
// CHECK-LABEL: func.func @uncalled
// CHECK:         te.compute "C"
func.func @uncalled(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<8xf32>
}

// VALUES: ['transpose_1.result0']
// VALUES: values ok
