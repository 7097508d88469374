// A weight store whose array has another shape or dtype than the module gives
// the weight is refused where the store is read, with the weight's name, the
// shape it has and the shape the module takes. A transposed array has as many
// elements as the right one, so nothing later would notice it; a wrongly sized
// one failed inside a reshape. (weights-errors-loop.mlir: a loop-level model.)

// The store holds 'w' transposed (3x2 where the module says 2x3).
// RUN: python -c "import numpy as np; np.savez('%t.npz', w=np.zeros((3, 2), np.float32), b=np.zeros(3, np.float32))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s > %t.mlir
// RUN: not tilecraft-run %t.mlir --entry main 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not tilecraft-opt %t.mlir -p compile-model 2>&1 | filecheck %s --check-prefix=SHAPE

// 'w' with too few elements.
// RUN: python -c "import numpy as np; np.savez('%t.size.npz', w=np.zeros((1, 3), np.float32), b=np.zeros(3, np.float32))"
// RUN: sed -e 's|@STORE@|%t.size.npz|' %s > %t.size.mlir
// RUN: not tilecraft-opt %t.size.mlir -p compile-model 2>&1 | filecheck %s --check-prefix=SIZE

// 'b' as float64 where the module takes float32.
// RUN: python -c "import numpy as np; np.savez('%t.dtype.npz', w=np.zeros((2, 3), np.float32), b=np.zeros(3, np.float64))"
// RUN: sed -e 's|@STORE@|%t.dtype.npz|' %s > %t.dtype.mlir
// RUN: not tilecraft-run %t.dtype.mlir --entry main 2>&1 | filecheck %s --check-prefix=DTYPE

// SHAPE-NOT: internal error
// SIZE-NOT: internal error
// DTYPE-NOT: internal error

builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @main(%x: tensor<2x3xf32> {tc.name = "x"}) -> tensor<2x3xf32> {
    // SHAPE: weights-errors.mlir.tmp.mlir:[[# @LINE + 2]]:5: error: weight 'w' in '{{.*}}.tmp.npz' is float32[3, 2], the module takes float32[2, 3] (as many elements in another shape: transposed?)
    // SIZE: weights-errors.mlir.tmp.size.mlir:[[# @LINE + 1]]:5: error: weight 'w' in '{{.*}}.size.npz' is float32[1, 3], the module takes float32[2, 3]{{$}}
    %w = graph.weight "w" : tensor<2x3xf32>
    // DTYPE: weights-errors.mlir.tmp.dtype.mlir:[[# @LINE + 1]]:5: error: weight 'b' in '{{.*}}.dtype.npz' is float64[3], the module takes float32[3]{{$}}
    %b = graph.weight "b" : tensor<3xf32>
    %s = graph.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %r = graph.mul %s, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    func.return %r : tensor<2x3xf32>
  }
}
// SHAPE-NOT: Traceback
// SIZE-NOT: Traceback
// DTYPE-NOT: Traceback
