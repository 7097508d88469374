// RUN: tilecraft-opt %s --split-input-file -p te-inline,convert-te-to-loop | filecheck %s

// convert-te-to-loop carries out no compute_inline of a te.compute (it rejects
// one: convert-te-to-loop-invalid.mlir); te-inline, run first, does.

// compute_inline: B's expression is substituted into C; B gets no loops.
func.func @inline(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    %s = arith.addf %b, %b : f32
    te.yield %s : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    sched.compute_inline %sb
  }
  func.return %C : tensor<8xf32>
}

// CHECK-LABEL: func.func @inline
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 8 {
// CHECK-NEXT:      %[[A:.*]] = memref.load %A[%[[I]]] : memref<8xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %[[E]] : f32
// CHECK-NEXT:      memref.store %[[S]], %C[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     loop.alloc

