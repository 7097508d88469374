// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// What the schedule replay refuses of the accelerator's primitives.

func.func @f(%A: tensor<8x8xi32>) -> tensor<8xi32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xi32> {
    %s = te.reduce sum (%k: "k" = 0 to 8) -> i32 {
      %a = te.read %A[%i, %k] : tensor<8x8xi32>
      te.yield %a : i32
    }
    te.yield %s : i32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xi32>
    %k = sched.axis %s "k"
    // CHECK: accel-invalid.mlir:[[# @LINE + 1]]:5: error: cannot run reduce axis 'k' of stage 'C' as virtual threads: its iterations accumulate into the same element; bind a spatial axis.
    sched.vthread %k
  }
  func.return %C : tensor<8xi32>
}

// -----

func.func @f(%A: tensor<8xi32>) -> tensor<8xi32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xi32> {
    %a = te.read %A[%i] : tensor<8xi32>
    te.yield %a : i32
  }
  sched.schedule {
    %a = sched.stage %A : tensor<8xi32>
    // CHECK: accel-invalid.mlir:[[# @LINE + 1]]:5: error: 'A' is an input; its buffer is the caller's (use sched.cache_read).
    sched.set_scope %a inp_buffer
  }
  func.return %C : tensor<8xi32>
}

// -----

func.func @f(%A: tensor<8xi32>) -> tensor<8xi32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xi32> {
    %a = te.read %A[%i] : tensor<8xi32>
    te.yield %a : i32
  }
  sched.schedule {
    %c = sched.stage %C : tensor<8xi32>
    // CHECK: accel-invalid.mlir:[[# @LINE + 1]]:5: error: 'C' is a function result; it is written to the caller's buffer.
    sched.set_scope %c acc_buffer
  }
  func.return %C : tensor<8xi32>
}

// -----

func.func @f(%A: tensor<8xi32>) -> tensor<8xi32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xi32> {
    %a = te.read %A[%i] : tensor<8xi32>
    te.yield %a : i32
  }
  sched.schedule {
    %c = sched.stage %C : tensor<8xi32>
    %i = sched.axis %c "i"
    sched.parallel %i
    // CHECK: accel-invalid.mlir:[[# @LINE + 1]]:5: error: axis 'i' is already parallel.
    sched.vthread %i
  }
  func.return %C : tensor<8xi32>
}
