// RUN: tilecraft-opt %s --split-input-file -p loop-unroll | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p "loop-unroll{trivial-only=true}" | filecheck %s --check-prefix=TRIVIAL

// Each iteration is a copy of the body with the variable a constant.
func.func @unrolled(%A: memref<3xf32>, %x: f32) {
  loop.for %j = 0 to 3 unrolled {
    memref.store %x, %A[%j] : memref<3xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @unrolled(
// CHECK-SAME:      %[[A:.*]]: memref<3xf32>, %[[X:.*]]: f32) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[X]], %[[A]][%[[C0]]] : memref<3xf32>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    memref.store %[[X]], %[[A]][%[[C1]]] : memref<3xf32>
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    memref.store %[[X]], %[[A]][%[[C2]]] : memref<3xf32>
// CHECK-NEXT:    func.return

// trivial-only=true leaves loops of more than one iteration, unrolled or not.
// TRIVIAL-LABEL: func.func @unrolled(
// TRIVIAL-NEXT:    loop.for %{{.*}} = 0 to 3 unrolled {

// -----

// Nested unrolled loops unroll inside out; values defined in the body are
// copied with it and the copies use each other, not the originals. A lower
// bound other than 0 gives the constants from there. Serial, parallel and
// vectorized loops of more than one iteration stay.
func.func @nested(%A: memref<4x4xf32>) {
  loop.for %i = 0 to 4 parallel {
    loop.for %j = 2 to 4 unrolled {
      loop.for %k = 0 to 2 unrolled {
        %a = memref.load %A[%j, %k] : memref<4x4xf32>
        %b = arith.addf %a, %a : f32
        memref.store %b, %A[%i, %k] : memref<4x4xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[A:.*]]: memref<4x4xf32>) {
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 parallel {
// CHECK-NEXT:      %[[J2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[V0:.*]] = memref.load %[[A]][%[[J2]], %[[K0]]]
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %[[V0]], %[[V0]] : f32
// CHECK-NEXT:      memref.store %[[S0]], %[[A]][%[[I]], %[[K0]]]
// CHECK-NEXT:      %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[V1:.*]] = memref.load %[[A]][%[[J2]], %[[K1]]]
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[V1]], %[[V1]] : f32
// CHECK-NEXT:      memref.store %[[S1]], %[[A]][%[[I]], %[[K1]]]
// CHECK-NEXT:      %[[J3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:      memref.load %[[A]][%[[J3]], %{{.*}}]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store %{{.*}}, %[[A]][%[[I]], %{{.*}}]
// CHECK-NEXT:      %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:      memref.load %[[A]][%[[J3]], %{{.*}}]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store %{{.*}}, %[[A]][%[[I]], %{{.*}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Trivial loops of any kind: one iteration leaves the body, none leaves nothing.
func.func @trivial(%A: memref<4xf32>, %x: f32) {
  loop.for %i = 2 to 3 parallel {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  loop.for %i = 0 to 1 vectorized {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  loop.for %i = 0 to 0 {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  loop.for %i = 0 to 2 vectorized {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @trivial(
// CHECK-SAME:      %[[A:.*]]: memref<4xf32>, %[[X:.*]]: f32) {
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    memref.store %[[X]], %[[A]][%[[C2]]]
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[X]], %[[A]][%[[C0]]]
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 2 vectorized {
// CHECK-NEXT:      memref.store %[[X]], %[[A]][%[[I]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// trivial-only=true unrolls these just the same.
// TRIVIAL-LABEL: func.func @trivial(
// TRIVIAL-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// TRIVIAL-NEXT:    memref.store %{{.*}}, %{{.*}}[%[[C2]]]
// TRIVIAL-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// TRIVIAL-NEXT:    memref.store %{{.*}}, %{{.*}}[%[[C0]]]
// TRIVIAL-NEXT:    loop.for %{{.*}} = 0 to 2 vectorized {

// -----

// A buffer in the body is allocated once per copy.
func.func @buffer(%A: memref<2xf32>, %x: f32) {
  loop.for %j = 0 to 2 unrolled {
    %L = loop.alloc "L" local : memref<1xf32>
    %c0 = arith.constant 0 : index
    memref.store %x, %L[%c0] : memref<1xf32>
    %v = memref.load %L[%c0] : memref<1xf32>
    memref.store %v, %A[%j] : memref<2xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @buffer(
// CHECK:         %[[L0:.*]] = loop.alloc "L" local : memref<1xf32>
// CHECK:         memref.load %[[L0]]
// CHECK:         %[[L1:.*]] = loop.alloc "L" local : memref<1xf32>
// CHECK-NOT:     %[[L0]][
// CHECK:         memref.load %[[L1]]
// CHECK-NOT:     loop.for

// -----

// A loop to a run-time bound is not trivial, whatever it turns out to be.
func.func @dynamic(%A: memref<64xf32>, %n: index) {
  loop.for %i = 0 to %n {
    %z = arith.constant 0.0 : f32
    memref.store %z, %A[%i] : memref<64xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT:    loop.for %i = 0 to %n {
// TRIVIAL-LABEL: func.func @dynamic(
// TRIVIAL-NEXT:    loop.for %i = 0 to %n {
