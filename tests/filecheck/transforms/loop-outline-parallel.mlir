// RUN: tilecraft-opt %s --split-input-file -p loop-outline-parallel | filecheck %s

// The parallel loop becomes a launch of a private function that runs the body
// for %i in [begin, end). Buffers and other values the body uses are passed;
// constants are copied into the body, not passed.
func.func @scale(%A: memref<64xf32>, %X: memref<f32>) {
  %two = arith.constant 2.0 : f32
  %x = memref.load %X[] : memref<f32>
  loop.for %i = 0 to 64 parallel {
    %a = memref.load %A[%i] : memref<64xf32>
    %b = arith.mulf %a, %two : f32
    %c = arith.addf %b, %x : f32
    memref.store %c, %A[%i] : memref<64xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @scale(
// CHECK-SAME:      %[[A:.*]]: memref<64xf32>, %[[XB:.*]]: memref<f32>) {
// CHECK-NEXT:    %{{.*}} = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[X:.*]] = memref.load %[[XB]][] : memref<f32>
// CHECK-NEXT:    loop.launch @scale_parallel0(%[[A]], %[[X]]) 0 to 64 : memref<64xf32>, f32
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func private @scale_parallel0(
// CHECK-SAME:      %[[BA:.*]]: memref<64xf32>, %[[BX:.*]]: f32, %[[BEGIN:.*]]: index, %[[END:.*]]: index) {
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]] step %[[ONE]] {
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[BA]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[V]], %[[TWO]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[M]], %[[BX]] : f32
// CHECK-NEXT:      memref.store %[[S]], %[[BA]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A parallel loop inside a serial one: the serial loop's variable is passed.
// Parallel loops nested in the outlined one (or in a vectorized one) run
// serially. Two parallel loops in one function get two bodies, in order, and a
// loop that does not start at 0 keeps its bounds on the launch.
func.func @nest(%A: memref<4x8x16xf32>) {
  loop.for %s = 0 to 4 {
    loop.for %i = 0 to 8 parallel {
      loop.for %j = 0 to 16 parallel {
        %a = memref.load %A[%s, %i, %j] : memref<4x8x16xf32>
        memref.store %a, %A[%s, %j, %i] : memref<4x8x16xf32>
      }
    }
  }
  loop.for %i = 2 to 8 parallel {
    loop.for %j = 0 to 16 vectorized {
      loop.for %k = 0 to 4 parallel {
        %a = memref.load %A[%k, %i, %j] : memref<4x8x16xf32>
        memref.store %a, %A[%k, %i, %j] : memref<4x8x16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @nest(
// CHECK-SAME:      %[[A:.*]]: memref<4x8x16xf32>) {
// CHECK-NEXT:    loop.for %[[S:.*]] = 0 to 4 {
// CHECK-NEXT:      loop.launch @nest_parallel0(%[[A]], %[[S]]) 0 to 8 : memref<4x8x16xf32>, index
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.launch @nest_parallel1(%[[A]]) 2 to 8 : memref<4x8x16xf32>
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func private @nest_parallel0(
// CHECK-SAME:      %{{.*}}: memref<4x8x16xf32>, %[[BS:.*]]: index, %{{.*}}: index, %{{.*}}: index) {
// CHECK:         scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.for %[[J:.*]] = 0 to 16 {
// CHECK-NEXT:        memref.load %{{.*}}[%[[BS]], %[[I]], %[[J]]]
// CHECK-LABEL: func.func private @nest_parallel1(
// CHECK:         scf.for
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 16 vectorized {
// CHECK-NEXT:        loop.for %{{.*}} = 0 to 4 {
// CHECK-NOT:     parallel
// CHECK-NOT:     loop.launch

// -----

// A function name already taken is skipped.
func.func @f(%A: memref<8xf32>) {
  loop.for %i = 0 to 8 parallel {
    %a = memref.load %A[%i] : memref<8xf32>
    memref.store %a, %A[%i] : memref<8xf32>
  }
  func.return
}
func.func @f_parallel0() {
  func.return
}

// CHECK-LABEL: func.func @f(
// CHECK:         loop.launch @f_parallel1(
// CHECK:       func.func private @f_parallel1(
// CHECK:       func.func @f_parallel0() {
