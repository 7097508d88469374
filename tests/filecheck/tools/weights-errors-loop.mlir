// A loop-level model (a graph function after compile-model) takes its weights
// from the store the module names, one argument each (tc.weight). An array of
// as many elements in another shape was bound after a reshape and computed
// wrong numbers; it is refused, naming the argument, the weight and both shapes.

// RUN: python -c "import numpy as np; np.savez('%t.npz', w=np.arange(6, dtype=np.float32).reshape(3, 2))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s > %t.mlir
// RUN: not tilecraft-run %t.mlir --entry main 2>&1 | filecheck %s

// The right shape runs: y[0, 0] = w[0, 1].
// RUN: python -c "import numpy as np; np.savez('%t.good.npz', w=np.arange(6, dtype=np.float32).reshape(2, 3))"
// RUN: sed -e 's|@STORE@|%t.good.npz|' %s > %t.good.mlir
// RUN: tilecraft-run %t.good.mlir --entry main 2>&1 | filecheck %s --check-prefix=GOOD
// GOOD: y: (2, 3) float32 [1., 0., 0., 0., 0., 0.]

// CHECK-NOT: internal error
builtin.module attributes {graph.weights = "@STORE@"} {
  // CHECK: weights-errors-loop.mlir.tmp.mlir:[[# @LINE + 1]]:3: error: argument #1 of @main: weight 'w' in '{{.*}}.tmp.npz' is float32[3, 2], the module takes float32[2, 3] (as many elements in another shape: transposed?)
  func.func @main(%w: memref<2x3xf32> {tc.weight = "w"}, %y: memref<2x3xf32> {tc.name = "y"}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %v = memref.load %w[%c0, %c1] : memref<2x3xf32>
    memref.store %v, %y[%c0, %c0] : memref<2x3xf32>
    func.return
  }
}
// CHECK-NOT: Traceback
