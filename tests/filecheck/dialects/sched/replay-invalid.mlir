// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// Schedule errors found by replaying the schedule against its te function: each
// names the schedule op at fault (file:line:col).

func.func @f(%A: tensor<8x8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'C' has no axis 'q' (its axes: i, k).
    %q = sched.axis %s "q"
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %k = sched.axis %s "k"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: cannot vectorize reduce axis 'k' of stage 'C': its iterations accumulate into the same
    sched.vectorize %k
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %k = sched.axis %s "k"
    %o, %n = sched.split %k by 2
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: cannot parallelize reduce axis 'k.outer' of stage 'C': its iterations accumulate into the
    sched.parallel %o
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 2
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: axis 'i' of stage 'C' was already split or fused; use the axes that replaced it.
    sched.unroll %i
  }
  func.return %C : tensor<8x8xf32>
}

// -----

// One vectorized axis per stage.
func.func @f(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    sched.vectorize %i
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'C' already has vectorized axis 'i'; vectorize one axis per stage (fuse them first).
    sched.vectorize %j
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %io, %ii = sched.split %i by 2
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: sched.fuse takes adjacent axes, outermost first (the current order is i.outer, i.inner,
    %f = sched.fuse %io, %j
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    %k = sched.axis %s "k"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: sched.fuse cannot fuse a reduce axis with a spatial axis.
    %f = sched.fuse %i, %k
  }
  func.return %C : tensor<8xf32>
}

// -----

// compute_at into a loop of a stage that does not read the producer.
func.func @f(%A: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  %D = te.compute "D" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    %sd = sched.stage %D : tensor<8xf32>
    %i = sched.axis %sd "i"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: loop 'i' of stage 'D' does not enclose a consumer of 'B': neither 'D' nor a stage computed inside that loop reads it.
    sched.compute_at %sb, %i
  }
  func.return %C, %D : tensor<8xf32>, tensor<8xf32>
}

// -----

// A stage read by two consumers cannot live inside one consumer's loop.
func.func @f(%A: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  %D = te.compute "D" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    %sc = sched.stage %C : tensor<8xf32>
    %i = sched.axis %sc "i"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: 'B' is also read by 'D', outside loop 'i' of 'C'; compute it at the root or give each
    sched.compute_at %sb, %i
  }
  func.return %C, %D : tensor<8xf32>, tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sa = sched.stage %A : tensor<8xf32>
    %sc = sched.stage %C : tensor<8xf32>
    %i = sched.axis %sc "i"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: 'A' is an input; only computed stages can be computed at a loop.
    sched.compute_at %sa, %i
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<8xf32>
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: 'C' is a function result and cannot be inlined.
    sched.compute_inline %sc
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: 'B' is a reduction and cannot be inlined.
    sched.compute_inline %sb
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    sched.compute_inline %sb
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'B' is inlined (sched.compute_inline): it has no loops to schedule.
    %i = sched.axis %sb "i"
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sa = sched.stage %A : tensor<8xf32>
    %sc = sched.stage %C : tensor<8xf32>
    %AA = sched.cache_read %sa "local" for %sc
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'C' does not read 'A'.
    %CC = sched.cache_read %sa "local" for %sc
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<8xf32>
    %i = sched.axis %sc "i"
    %o, %n = sched.split %i by 2
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'C' is already scheduled; apply sched.cache_write before splitting, annotating or
    %CL = sched.cache_write %sc "local"
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<8xf32>
    %i = sched.axis %sc "i"
    %CL = sched.cache_write %sc "local"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: axis 'i' of stage 'C' was replaced by sched.cache_write; take the stage's axes again
    sched.parallel %i
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @f(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  %D = te.compute "D" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %c = te.read %C[%i, %j] : tensor<8x8xf32>
    te.yield %c : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<8x8xf32>
    %sd = sched.stage %D : tensor<8x8xf32>
    %i = sched.axis %sc "i"
    %j = sched.axis %sd "j"
    // CHECK: replay-invalid.mlir:[[# @LINE + 1]]:5: error: sched.tile takes two different axes of one stage.
    %a, %b, %c, %d = sched.tile %i, %j by 2, 2
  }
  func.return %D : tensor<8x8xf32>
}
