// What convert-te-to-loop refuses: each error names the op (file:line:col) and
// says what to do.
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop --verify-diagnostics 2>&1 | filecheck %s

// compute_inline of a te.compute is te-inline's to carry out, not this pass's.
func.func @not_inlined(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: stage 'B' is still marked sched.compute_inline; run te-inline first, which substitutes it into its readers.
    sched.compute_inline %sb
  }
  func.return %C : tensor<8xf32>
}

// -----

// An unrolled loop's extent is known only once bounds are inferred.
func.func @unroll(%A: tensor<1024xf32>) -> tensor<1024xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<1024xf32> {
    %a = te.read %A[%i] : tensor<1024xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %B : tensor<1024xf32>
    %i = sched.axis %s "i"
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: axis 'i' has extent 1024; unrolling more than 512 iterations is refused — split it first.
    sched.unroll %i
  }
  func.return %B : tensor<1024xf32>
}

// -----

// A result is an output buffer the function writes: an input returned as is has none.
func.func @returns_input(%A: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %B = te.compute "B" (%i: "i") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:3: error: convert-te-to-loop: each result must be a distinct te.compute (return a copy to return an input).
  func.return %B, %A : tensor<4xf32>, tensor<4xf32>
}

// -----

// The same te.compute returned twice would need two buffers to be one.
func.func @returned_twice(%A: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %B = te.compute "B" (%i: "i") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:3: error: convert-te-to-loop: each result must be a distinct te.compute (return a copy to return an input).
  func.return %B, %B : tensor<4xf32>, tensor<4xf32>
}

// -----

// A te function takes tensors only: a non-tensor argument has no buffer (nor
// would a call of the function have one to pass), so the function is rejected.
builtin.module {
  func.func @caller(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
    %y = func.call @scale(%x, %n) : (tensor<4xf32>, index) -> tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
  // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:3: error: convert-te-to-loop: argument #2 of @scale has type index; te functions take tensors only (pass a scalar as a one-element tensor)
  func.func @scale(%p0: tensor<4xf32>, %n: index) -> tensor<4xf32> {
    %s = te.compute "s" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      te.yield %0 : f32
    }
    func.return %s : tensor<4xf32>
  }
}

// -----

// A read past the end of its tensor for some value of the axes is refused at
// the read: `(i - 1) % 4 + 1` is 4 at i = 0 (floor modulo, as in Python and TVM).
func.func @read_past_end(%A: tensor<4xf32>) -> tensor<1xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<1xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %m = arith.subi %i, %c1 : index
    %w = te.floormod %m, %c4 : index
    %x = arith.addi %w, %c1 : index
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: te.read of 'A' is out of bounds: index 0 takes values from 4 to 4, but dimension 0 has size 4 (valid: 0 to 3); guard the read with te.if_then_else or change the index (`%` and `//` round toward minus infinity).
    %a = te.read %A[%x] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<1xf32>
}

// -----

// A shifted read over the whole extent, and a constant index past the end.
func.func @shifted(%A: tensor<4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %x = arith.addi %i, %c1 : index
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: te.read of 'A' is out of bounds: index 0 takes values from 1 to 4, but dimension 0 has size 4
    %a = te.read %A[%x] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @constant_index(%A: tensor<4x4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %c9 = arith.constant 9 : index
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: te.read of 'A' is out of bounds: index 1 takes values from 9 to 9, but dimension 1 has size 4
    %a = te.read %A[%i, %c9] : tensor<4x4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

// A reduce axis reaching below zero.
func.func @reduce_below(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 3) -> f32 {
      %x = arith.subi %i, %k : index
      // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:7: error: convert-te-to-loop: te.read of 'A' is out of bounds: index 0 takes values from -2 to 7, but dimension 0 has size 8
      %a = te.read %A[%x] : tensor<8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}

// -----

// A loop to a size known only when the function runs is serial or parallel:
// vectorize the static inner part of a split instead.
func.func @vectorize_symbolic(%A: tensor<?xf32, ["n"]>) -> tensor<?xf32, ["n"]> {
  %B = te.compute "B" (%i: "i") -> tensor<?xf32, ["n"]> {
    %a = te.read %A[%i] : tensor<?xf32, ["n"]>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %B : tensor<?xf32, ["n"]>
    %i = sched.axis %s "i"
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: axis 'i' of 'B' runs to n, known only when the program runs; a vectorized loop needs a static extent: split the axis by a factor and annotate the inner part
    sched.vectorize %i
  }
  func.return %B : tensor<?xf32, ["n"]>
}

// -----

// A size is read from an argument that has it as a whole dimension.
// CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:1: error: convert-te-to-loop: the size n of 'A' is not a whole dimension of any argument or result, so the loop function cannot read it
func.func @unreadable_size(%A: tensor<?xf32, ["2 * n"]>) -> tensor<?xf32, ["2 * n"]> {
  %B = te.compute "B" (%i: "i") -> tensor<?xf32, ["2 * n"]> {
    %a = te.read %A[%i] : tensor<?xf32, ["2 * n"]>
    te.yield %a : f32
  }
  func.return %B : tensor<?xf32, ["2 * n"]>
}

// -----

// Only the outermost axis of a fuse may run to a size known when it runs (the
// others are recovered by div/mod of the fused index by their extents).
func.func @fuse_symbolic_inner(%A: tensor<4x?xf32, ["n"]>) -> tensor<4x?xf32, ["n"]> {
  // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:3: error: convert-te-to-loop: stage 'B', whose sizes are known only when it runs: only the outermost axis of a fuse may have a size known when it runs, not 'j'
  %B = te.compute "B" (%i: "i", %j: "j") -> tensor<4x?xf32, ["n"]> {
    %a = te.read %A[%i, %j] : tensor<4x?xf32, ["n"]>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %B : tensor<4x?xf32, ["n"]>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %f = sched.fuse %i, %j
  }
  func.return %B : tensor<4x?xf32, ["n"]>
}

// -----

// A read that may leave its tensor for some size is refused.
func.func @maybe_out_of_bounds(%A: tensor<?xf32, ["n"]>) -> tensor<?xf32, ["n"]> {
  %B = te.compute "B" (%i: "i") -> tensor<?xf32, ["n"]> {
    %c1 = arith.constant 1 : index
    %k = arith.addi %i, %c1 : index
    // CHECK: convert-te-to-loop-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: te.read of 'A' may be out of bounds: index 0 (i + 1) is not provably within dimension 0 (size n) for every size
    %a = te.read %A[%k] : tensor<?xf32, ["n"]>
    te.yield %a : f32
  }
  func.return %B : tensor<?xf32, ["n"]>
}
