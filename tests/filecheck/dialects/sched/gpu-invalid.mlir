// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: sched.bind binds to one of blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, not 'warpIdx.x'.
func.func @bad_tag(%A: tensor<64xf32>) -> tensor<64xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<64xf32> {
    %a = te.read %A[%i] : tensor<64xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<64xf32>
    %i = sched.axis %s "i"
    sched.bind %i to "warpIdx.x"
  }
  func.return %C : tensor<64xf32>
}

// -----

// CHECK: cannot bind reduce axis 'k' of stage 'S' to threadIdx.x
func.func @reduce(%A: tensor<64xf32>) -> tensor<f32> {
  %S = te.compute "S" () -> tensor<f32> {
    %r = te.reduce sum (%k: "k" = 0 to 64) -> f32 {
      %a = te.read %A[%k] : tensor<64xf32>
      te.yield %a : f32
    }
    te.yield %r : f32
  }
  sched.schedule {
    %s = sched.stage %S : tensor<f32>
    %k = sched.axis %s "k"
    sched.bind %k to "threadIdx.x"
  }
  func.return %S : tensor<f32>
}

// -----

// CHECK: threadIdx.x is already bound to axis 'i.inner' of stage 'C'.
func.func @twice(%A: tensor<64xf32>) -> tensor<64xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<64xf32> {
    %a = te.read %A[%i] : tensor<64xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<64xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 8
    sched.bind %n to "threadIdx.x"
    sched.bind %o to "threadIdx.x"
  }
  func.return %C : tensor<64xf32>
}
