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
