// RUN: tilecraft-opt %s --split-input-file -p fold-constants | filecheck %s
// With a weight store: the test writes one, names it in the module and saves the
// store the pass changed.
// RUN: python -c "import numpy as np; np.savez('%t.npz', **{'fc.weight': np.arange(32, dtype=np.float32).reshape(8, 4), 'scale': np.full(4, 0.5, np.float32)})"
// RUN: sed -e 's|@STORE@|%t.npz|' %S/Inputs/fold-constants-store.mlir | tilecraft-opt -p fold-constants --weights-out %t.out.npz | filecheck %s --check-prefix=STORE
// RUN: python -c "import numpy as np; s = np.load('%t.out.npz'); print(sorted(s.files)); print(s['fc.weight.transpose'][1].tolist(), s['fc.weight.transpose'].shape)" | filecheck %s --check-prefix=ARRAYS
// The store it read is left as it was.
// RUN: python -c "import numpy as np; print(sorted(np.load('%t.npz').files))" | filecheck %s --check-prefix=OLD

// STORE-LABEL: func.func @store
// STORE-NEXT:    %[[T:.*]] = graph.weight "fc.weight.transpose" : tensor<4x8xf32>
// The small result (4 elements) is inline; the weights that fed it are gone.
// STORE-NEXT:    %[[S:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// STORE-NEXT:    %[[D:.*]] = graph.dense %x, %[[T]]
// STORE-NEXT:    %[[M:.*]] = graph.mul %[[D]], %[[S]]
// STORE-NOT:     graph.weight "scale"

// The saved store holds what the output names: the folded arrays it no longer
// reads are left out.
// ARRAYS: ['fc.weight.transpose']
// Row 1 of the transpose is column 1 of the original.
// ARRAYS-NEXT: [1.0, 5.0, 9.0, 13.0, 17.0, 21.0, 25.0, 29.0] (4, 8)
// OLD: ['fc.weight', 'scale']

// Chains of ops on constants collapse into one constant; ops that read an
// argument stay.
func.func @chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = graph.constant dense<2.0> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -3.0]> : tensor<2xf32>
  %m = graph.mul %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = graph.relu %m : (tensor<2xf32>) -> tensor<2xf32>
  %y = graph.add %r, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[2.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[C]], %x
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Without a weight store, weights are unknown: nothing that reads one folds.
func.func @weight_without_store(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = graph.weight "fc.weight" : tensor<4x8xf32>
  %n = graph.neg %w : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = graph.dense %x, %n : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %d : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @weight_without_store
// CHECK-NEXT:    graph.weight "fc.weight"
// CHECK-NEXT:    graph.neg
// CHECK-NEXT:    graph.dense

// -----

// A large result needs a store to live in, so without one it stays; a constant
// still used elsewhere stays too.
func.func @large_without_store() -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = graph.constant dense<1.0> : tensor<4x8xf32>
  %e = graph.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %e, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @large_without_store
// CHECK-NEXT:    %[[A:.*]] = graph.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[A]]
// CHECK-NEXT:    func.return %[[E]], %[[A]]

// -----

// Integer and multi-result ops fold too: a shape computation on int64 ids.
func.func @ints() -> (tensor<2xi64>, tensor<1xi64>) {
  %a = graph.constant dense<[4, 6, 8]> : tensor<3xi64>
  %b = graph.constant dense<2> : tensor<3xi64>
  %q = graph.div %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %p, %r = graph.split %q {axis = 0 : i64, sizes = array<i64: 2, 1>} : (tensor<3xi64>) -> (tensor<2xi64>, tensor<1xi64>)
  func.return %p, %r : tensor<2xi64>, tensor<1xi64>
}

// CHECK-LABEL: func.func @ints
// CHECK-NEXT:    %[[P:.*]] = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<4> : tensor<1xi64>
// CHECK-NEXT:    func.return %[[P]], %[[R]]
