// RUN: tilecraft-opt %s --split-input-file -p te-inline | filecheck %s

// A chain B -> D -> C with B and D inlined: C computes exp(A[i]) * 2 itself, and
// the schedule keeps only what still names a stage.
func.func @chain(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %D = te.compute "D" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %b, %two : f32
    te.yield %m : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %c1 = arith.constant 1 : index
    %x = arith.addi %i, %c1 : index
    %c8 = arith.constant 8 : index
    %y = arith.remsi %x, %c8 : index
    %d = te.read %D[%y] : tensor<8xf32>
    te.yield %d : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    %sd = sched.stage %D : tensor<8xf32>
    %sc = sched.stage %C : tensor<8xf32>
    sched.compute_inline %sb
    sched.compute_inline %sd
    %i = sched.axis %sc "i"
    sched.parallel %i
  }
  func.return %C : tensor<8xf32>
}

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %C = te.compute "C" (%[[I:.*]]: "i") -> tensor<8xf32> {
// CHECK:           %[[Y:.*]] = arith.remsi
// The inlined bodies read at the consumer's index, innermost producer first.
// CHECK-NEXT:      %[[A:.*]] = te.read %A[%[[Y]]] : tensor<8xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[TWO]] : f32
// CHECK-NEXT:      te.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.schedule {
// CHECK-NEXT:      %[[S:.*]] = sched.stage %C : tensor<8xf32>
// CHECK-NEXT:      %[[AX:.*]] = sched.axis %[[S]] "i"
// CHECK-NEXT:      sched.parallel %[[AX]]
// CHECK-NEXT:    }
// CHECK-NOT:     te.compute "B"

// -----

// Without compute_inline nothing changes.
func.func @none(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  func.return %B : tensor<8xf32>
}

// CHECK-LABEL: func.func @none
// CHECK-NEXT:    %B = te.compute "B"

// -----

// Each read is one substitution: two reads of B at different indices give two
// copies of its body, each at its own index.
func.func @twice(%A: tensor<8xf32>) -> tensor<7xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %n = arith.negf %a : f32
    te.yield %n : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<7xf32> {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %x = te.read %B[%i] : tensor<8xf32>
    %y = te.read %B[%j] : tensor<8xf32>
    %s = arith.addf %x, %y : f32
    te.yield %s : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<8xf32>
    sched.compute_inline %sb
  }
  func.return %C : tensor<7xf32>
}

// CHECK-LABEL: func.func @twice
// CHECK-NEXT:    %C = te.compute "C" (%[[I:.*]]: "i") -> tensor<7xf32> {
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[AI:.*]] = te.read %A[%[[I]]] : tensor<8xf32>
// CHECK-NEXT:      %[[X:.*]] = arith.negf %[[AI]] : f32
// CHECK-NEXT:      %[[AJ:.*]] = te.read %A[%[[J]]] : tensor<8xf32>
// CHECK-NEXT:      %[[Y:.*]] = arith.negf %[[AJ]] : f32
// CHECK-NEXT:      %{{.*}} = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      te.yield
// CHECK-NEXT:    }
// CHECK-NOT:     sched.stage
// CHECK-NOT:     te.compute "B"
