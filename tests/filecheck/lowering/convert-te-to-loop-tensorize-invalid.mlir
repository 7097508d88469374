// sched.tensorize errors convert-te-to-loop finds before it changes anything
// (analysis/tensorize.py, with the inferred bounds): the region does not compute
// what the intrinsic computes, and the message names the index, extent, op or
// type that differs; or the region cannot be one call of it. Each is reported at
// the sched.tensorize op (file:line:col).
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop --verify-diagnostics 2>&1 | filecheck %s

// The stage reads A at 2*k (k split: 2*k.inner inside the region); the
// intrinsic reads A[i, k].
func.func @index(%A: tensor<8x32xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %c2 = arith.constant 2 : index
      %k2 = arith.muli %k, %c2 : index
      %1 = te.read %A[%i, %k2] : tensor<8x32xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32: input A index 1 is k, the stage reads 2*k.inner here.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// B read transposed: its index 0 is the region's j, the intrinsic's is k.
func.func @transposed(%A: tensor<8x16xf32>, %B: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%j, %k] : tensor<16x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x16xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32: input B index 0 is k, the stage reads j.inner here.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x16xf32>
}

// -----

// j split by 8: the intrinsic's j has 16 iterations.
func.func @extent(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 8
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32: output axis j has extent 16, the stage's loop 'j.inner' has extent 8.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// The stage adds where the intrinsic multiplies.
func.func @op(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.addf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32 computes 'arith.mulf' where stage 'C' computes 'arith.addf'.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// A max reduction is not the intrinsic's sum.
func.func @kind(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce max (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32 is a sum reduction, stage 'C' a max reduction.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// f64 elements, the intrinsic computes f32.
func.func @type(%A: tensor<8x16xf64>, %B: tensor<16x32xf64>) -> tensor<8x32xf64> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf64> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f64 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf64>
      %2 = te.read %B[%k, %j] : tensor<16x32xf64>
      %3 = arith.mulf %1, %2 : f64
      te.yield %3 : f64
    }
    te.yield %0 : f64
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf64>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32: output C has element type f32, stage 'C' has f64.
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf64>
}

// -----

// Tensorized at j.inner: the region has no loop of i (the intrinsic's i has 4).
func.func @reduce_outside(%A: tensor<8x16xf32>, %B: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x32xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<8x16xf32>
      %2 = te.read %B[%k, %j] : tensor<16x32xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %ii = sched.split %i by 4
    %jo, %ji = sched.split %j by 16
    %ko, %ki = sched.split %k by 8
    sched.reorder %io, %jo, %ko, %ii, %ji, %ki
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemm_4x16x8_f32: output axis i has extent 4, the stage's axis 'i' has no loop in the region: extent 1.
    sched.tensorize %ji with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<8x32xf32>
}

// -----

// 10 rows split by 4: the last tile would run past the tensor's edge.
func.func @edge(%A: tensor<10x8xf32>, %B: tensor<8x16xf32>) -> tensor<10x16xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<10x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %1 = te.read %A[%i, %k] : tensor<10x8xf32>
      %2 = te.read %B[%k, %j] : tensor<8x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<10x16xf32>
    %i = sched.axis %s "i"
    %io, %ii = sched.split %i by 4
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: the tensorized region of 'C' runs past the edge of its tensor for some values of i.inner; choose split factors that divide the axes
    sched.tensorize %ii with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<10x16xf32>
}

// -----

// int16 inputs: the intrinsic multiplies int8 values.
func.func @input_type(%X: tensor<1x16xi16>, %W: tensor<16x16xi16>) -> tensor<1x16xi32> {
  %C = te.compute "C" (%b: "b", %j: "j") -> tensor<1x16xi32> {
    %0 = te.reduce sum (%k: "k" = 0 to 16) -> i32 {
      %1 = te.read %X[%b, %k] : tensor<1x16xi16>
      %2 = arith.extsi %1 : i16 to i32
      %3 = te.read %W[%j, %k] : tensor<16x16xi16>
      %4 = arith.extsi %3 : i16 to i32
      %5 = arith.muli %2, %4 : i32
      te.yield %5 : i32
    }
    te.yield %0 : i32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<1x16xi32>
    %b = sched.axis %s "b"
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: intrinsic gemv_1x16x16_i8: input A has element type i8, the stage reads 'X' of i16 there.
    sched.tensorize %b with "gemv_1x16x16_i8"
  }
  func.return %C : tensor<1x16xi32>
}

// -----

// A rank-3 stage tensorized at its first axis: the intrinsic's output has rank 2
// and covers only the last two axes, but the region also loops over n.
func.func @leading(%A: tensor<2x4x8xf32>, %B: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %C = te.compute "C" (%n: "n", %i: "i", %j: "j") -> tensor<2x4x16xf32> {
    %0 = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %1 = te.read %A[%n, %i, %k] : tensor<2x4x8xf32>
      %2 = te.read %B[%k, %j] : tensor<8x16xf32>
      %3 = arith.mulf %1, %2 : f32
      te.yield %3 : f32
    }
    te.yield %0 : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<2x4x16xf32>
    %n = sched.axis %s "n"
    // CHECK: convert-te-to-loop-tensorize-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tensorize: the region spans axis 'n' of stage 'C' (loop 'n'), but intrinsic gemm_4x16x8_f32 has an output of rank 2, which covers only the last 2 axes.
    sched.tensorize %n with "gemm_4x16x8_f32"
  }
  func.return %C : tensor<2x4x16xf32>
}
