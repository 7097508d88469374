// RUN: tilecraft-opt %s --split-input-file -p te-inline --verify-diagnostics 2>&1 | filecheck %s

// An inlined stage cannot be scheduled afterwards.
func.func @scheduled_after(%A: tensor<8xf32>) -> tensor<8xf32> {
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
    // CHECK: te-inline-invalid.mlir:[[# @LINE + 1]]:5: error: stage 'B' is inlined (sched.compute_inline): it has no loops to schedule.
    %i = sched.axis %sb "i"
  }
  func.return %C : tensor<8xf32>
}

// -----

// Only a te.compute can be inlined, not an input.
func.func @input(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sa = sched.stage %A : tensor<8xf32>
    // CHECK: te-inline-invalid.mlir:[[# @LINE + 1]]:5: error: only a te.compute or a copy stage can be inlined, and 'A' is neither.
    sched.compute_inline %sa
  }
  func.return %C : tensor<8xf32>
}

// -----

// A stage handle used before its compute_inline (here by a cache_read) would
// name a stage that no longer exists.
func.func @cached(%A: tensor<8xf32>) -> tensor<8xf32> {
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
    %sc = sched.stage %C : tensor<8xf32>
    // CHECK: te-inline-invalid.mlir:[[# @LINE + 1]]:5: error: te-inline: stage 'B' is inlined and cannot be scheduled.
    %bc = sched.cache_read %sb "global" for %sc
    sched.compute_inline %sb
  }
  func.return %C : tensor<8xf32>
}
