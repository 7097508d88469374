// RUN: tilecraft-opt %s --split-input-file -p loop-outline-parallel | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'loop-outline-parallel{thread-cost=1000}' | filecheck %s --check-prefix=COST
// RUN: tilecraft-opt %s --split-input-file -p 'loop-outline-parallel{thread-cost=0}' | filecheck %s --check-prefix=NOCAP

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
// CHECK-NEXT:    loop.launch @scale_parallel0(%[[A]], %[[X]]) 0 to 64 {tc.max_threads = 1 : i64} : memref<64xf32>, f32
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
// CHECK-NEXT:      loop.launch @nest_parallel0(%[[A]], %[[S]]) 0 to 8 {tc.max_threads = 1 : i64} : memref<4x8x16xf32>, index
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.launch @nest_parallel1(%[[A]]) 2 to 8 {tc.max_threads = 1 : i64} : memref<4x8x16xf32>
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

// -----

// Each launch gets the threads its work pays for: the largest n with
// n (n - 1) thread-cost <= work (analysis/parallel_work.py). Work units count
// loads, stores and arithmetic on data (not constants or index arithmetic),
// times the iterations around them; a vectorized loop counts its 512-bit
// vectors, a transcendental 16, a guard its body, an scf.if its dearer branch.

// 64 x (load, mulf, store) = 192 units: not worth a second thread.
func.func @small(%A: memref<64xf32>) {
  %two = arith.constant 2.0 : f32
  loop.for %i = 0 to 64 parallel {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %a = memref.load %A[%i] : memref<64xf32>
    %b = arith.mulf %a, %two : f32
    memref.store %b, %A[%i] : memref<64xf32>
  }
  func.return
}

// 256 x 256 x 3 = 196608 units: 14 threads at a cost of 1000 (14 x 13 x 1000
// <= 196608 < 15 x 14 x 1000).
func.func @rows(%A: memref<256x256xf32>) {
  %two = arith.constant 2.0 : f32
  loop.for %i = 0 to 256 parallel {
    loop.for %j = 0 to 256 {
      %a = memref.load %A[%i, %j] : memref<256x256xf32>
      %b = arith.mulf %a, %two : f32
      memref.store %b, %A[%i, %j] : memref<256x256xf32>
    }
  }
  func.return
}

// The same rows vectorized: 16 f32 lanes a vector, 256 x 16 x 3 = 12288 units,
// 4 threads (4 x 3 x 1000 <= 12288 < 5 x 4 x 1000).
func.func @vectors(%A: memref<256x256xf32>) {
  %two = arith.constant 2.0 : f32
  loop.for %i = 0 to 256 parallel {
    loop.for %j = 0 to 256 vectorized {
      %a = memref.load %A[%i, %j] : memref<256x256xf32>
      %b = arith.mulf %a, %two : f32
      memref.store %b, %A[%i, %j] : memref<256x256xf32>
    }
  }
  func.return
}

// 290 x (load, cmpf, exp 16 + mulf or negf, store) = 290 x 20 = 5800 units:
// 2 threads (2 x 1 x 1000 <= 5800 < 3 x 2 x 1000).
func.func @branches(%A: memref<290xf32>) {
  %zero = arith.constant 0.0 : f32
  loop.for %i = 0 to 290 parallel {
    %a = memref.load %A[%i] : memref<290xf32>
    %p = arith.cmpf ogt, %a, %zero : f32
    %r = scf.if %p -> (f32) {
      %e = math.exp %a : f32
      %m = arith.mulf %e, %a : f32
      scf.yield %m : f32
    } else {
      %n = arith.negf %a : f32
      scf.yield %n : f32
    }
    memref.store %r, %A[%i] : memref<290xf32>
  }
  func.return
}

// 3 x 4096 x 3 units would pay for 6 threads, but 3 iterations keep 3 busy.
func.func @few(%A: memref<3x4096xf32>) {
  loop.for %i = 0 to 3 parallel {
    loop.for %j = 0 to 4096 {
      %a = memref.load %A[%i, %j] : memref<3x4096xf32>
      %b = arith.addf %a, %a : f32
      memref.store %b, %A[%i, %j] : memref<3x4096xf32>
    }
  }
  func.return
}

// A loop that carries a cap keeps it, whatever its work (a decision made before).
func.func @given(%A: memref<64xf32>) {
  loop.for %i = 0 to 64 parallel {
    %a = memref.load %A[%i] : memref<64xf32>
    memref.store %a, %A[%i] : memref<64xf32>
  } {tc.max_threads = 6}
  func.return
}

// CHECK-LABEL: func.func @small(
// CHECK:         loop.launch @small_parallel0(%{{.*}}) 0 to 64 {tc.max_threads = 1 : i64}
// CHECK-LABEL: func.func @rows(
// CHECK:         loop.launch @rows_parallel0(%{{.*}}) 0 to 256 {tc.max_threads = {{[0-9]+}} : i64}
// CHECK-LABEL: func.func @given(
// CHECK:         loop.launch @given_parallel0(%{{.*}}) 0 to 64 {tc.max_threads = 6 : i64}

// COST-LABEL: func.func @small(
// COST:         loop.launch @small_parallel0(%{{.*}}) 0 to 64 {tc.max_threads = 1 : i64}
// COST-LABEL: func.func @rows(
// COST:         loop.launch @rows_parallel0(%{{.*}}) 0 to 256 {tc.max_threads = 14 : i64}
// COST-LABEL: func.func @vectors(
// COST:         loop.launch @vectors_parallel0(%{{.*}}) 0 to 256 {tc.max_threads = 4 : i64}
// COST-LABEL: func.func @branches(
// COST:         loop.launch @branches_parallel0(%{{.*}}) 0 to 290 {tc.max_threads = 2 : i64}
// COST-LABEL: func.func @few(
// COST:         loop.launch @few_parallel0(%{{.*}}) 0 to 3 {tc.max_threads = 3 : i64}
// COST-LABEL: func.func @given(
// COST:         loop.launch @given_parallel0(%{{.*}}) 0 to 64 {tc.max_threads = 6 : i64}

// Without a cost, no cap: every launch may use every thread, except one whose
// loop says otherwise.
// NOCAP-LABEL: func.func @small(
// NOCAP-NOT:     tc.max_threads
// NOCAP:       func.func @given(
// NOCAP:         loop.launch @given_parallel0(%{{.*}}) 0 to 64 {tc.max_threads = 6 : i64}

// -----

// A parallel loop to a run-time bound is launched to that bound (the bound is
// not passed to the body: the launch gives it its chunk); the iteration's work
// over a thread's cost lets the launch cap its threads from the extent it gets.
// A cap given on the loop is kept as it is.
func.func @dynamic(%A: memref<?xf32>, %n: index) {
  loop.for %i = 0 to %n parallel {
    %z = arith.constant 0.0 : f32
    memref.store %z, %A[%i] : memref<?xf32>
  }
  loop.for %i = 0 to %n parallel {
    %z = arith.constant 1.0 : f32
    memref.store %z, %A[%i] : memref<?xf32>
  } {tc.max_threads = 2 : i64}
  func.return
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT:    loop.launch @dynamic_parallel0(%A) 0 to %n {tc.iteration_cost = {{.*}} : f64} : memref<?xf32>
// CHECK-NEXT:    loop.launch @dynamic_parallel1(%A) 0 to %n {tc.max_threads = 2 : i64} : memref<?xf32>
// CHECK:       func.func private @dynamic_parallel0(%A: memref<?xf32>, %begin: index, %end: index) {
// CHECK:         scf.for %i = %begin to %end step %c1 {
