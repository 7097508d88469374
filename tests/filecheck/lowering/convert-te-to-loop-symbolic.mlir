// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop | filecheck %s

// Sizes known when the function runs: a `?` of the tensor types, named by the
// encoding. The loop function takes memrefs with `?` sizes (`tc.dims` names
// them), reads each size once from the first argument that has it as a whole
// dimension, and runs its loops to it.
func.func @add(%A: tensor<?x8xf32, ["n"]>, %B: tensor<?x8xf32, ["n"]>) -> tensor<?x8xf32, ["n"]> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<?x8xf32, ["n"]> {
    %a = te.read %A[%i, %j] : tensor<?x8xf32, ["n"]>
    %b = te.read %B[%i, %j] : tensor<?x8xf32, ["n"]>
    %c = arith.addf %a, %b : f32
    te.yield %c : f32
  }
  func.return %C : tensor<?x8xf32, ["n"]>
}

// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %A: memref<?x8xf32> {tc.name = "A", tc.dims = ["n"]}, %B: memref<?x8xf32> {tc.name = "B", tc.dims = ["n"]}, %C: memref<?x8xf32> {tc.name = "C", tc.dims = ["n"]}) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %n = memref.dim %A, %[[ZERO]] : memref<?x8xf32>
// CHECK-NEXT:    loop.for %i = 0 to %n {
// CHECK-NEXT:      loop.for %j = 0 to 8 {
// CHECK-NOT:         loop.guard
// CHECK:             memref.store %c, %C[%i, %j] : memref<?x8xf32>

// -----

// A split by a factor: ceil(n / 8) outer iterations (a parallel loop to a
// run-time bound), a static inner loop that can be vectorized, and a guard of
// the last tile; an intermediate stage gets a buffer of `?` size.
func.func @scale(%A: tensor<?xf32, ["n"]>) -> tensor<?xf32, ["n"]> {
  %B = te.compute "B" (%i: "i") -> tensor<?xf32, ["n"]> {
    %a = te.read %A[%i] : tensor<?xf32, ["n"]>
    %b = arith.addf %a, %a : f32
    te.yield %b : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<?xf32, ["n"]> {
    %b = te.read %B[%i] : tensor<?xf32, ["n"]>
    %c = arith.mulf %b, %b : f32
    te.yield %c : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<?xf32, ["n"]>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 8
    sched.vectorize %n
    sched.parallel %o
  }
  func.return %C : tensor<?xf32, ["n"]>
}

// CHECK-LABEL: func.func @scale(
// CHECK:         %n = memref.dim %A, %{{.*}} : memref<?xf32>
// CHECK-NEXT:    %B = loop.alloc "B" global(%n) : memref<?xf32>
// CHECK-NEXT:    loop.for %i = 0 to %n {
// CHECK:         %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[SEVEN]], %n : index
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.floordivsi %[[UP]], %[[EIGHT]] : index
// CHECK-NEXT:    loop.for %i.outer = 0 to %[[TILES]] parallel {
// CHECK:           loop.for %i.inner = 0 to 8 vectorized {
// CHECK:             %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %n : index
// CHECK-NEXT:        loop.guard %[[IN]] {

// -----

// A size that is an expression of another (`n - 2`), read through the argument
// that has `n` whole; the reads at i and i + 2 stay within n for every n.
func.func @window(%A: tensor<?xf32, ["n"]>) -> tensor<?xf32, ["n - 2"]> {
  %B = te.compute "B" (%i: "i") -> tensor<?xf32, ["n - 2"]> {
    %a = te.read %A[%i] : tensor<?xf32, ["n"]>
    %c2 = arith.constant 2 : index
    %k = arith.addi %i, %c2 : index
    %b = te.read %A[%k] : tensor<?xf32, ["n"]>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %B : tensor<?xf32, ["n - 2"]>
}

// CHECK-LABEL: func.func @window(
// CHECK-SAME:    %B: memref<?xf32> {tc.name = "B", tc.dims = ["n - 2"]})
// CHECK:         %n = memref.dim %A, %{{.*}} : memref<?xf32>
// CHECK:         %[[TOP:.*]] = arith.addi %{{.*}}, %n : index
// CHECK:         loop.for %i = 0 to %[[TOP]] {
// CHECK-NOT:       loop.guard

// -----

// A reduction to a size and a size in an expression: both read the value the
// function took from its argument.
func.func @normalize(%A: tensor<4x?xf32, ["n"]>) -> tensor<4xf32> {
  %S = te.compute "S" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce sum (%k: "k" = 0 to "n") -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x?xf32, ["n"]>
      %n = te.size "n"
      %ni = arith.index_cast %n : index to i32
      %nf = arith.sitofp %ni : i32 to f32
      %q = arith.divf %a, %nf : f32
      te.yield %q : f32
    }
    te.yield %s : f32
  }
  func.return %S : tensor<4xf32>
}

// CHECK-LABEL: func.func @normalize(
// CHECK:         %n = memref.dim %A, %{{.*}} : memref<4x?xf32>
// CHECK:           loop.for %k = 0 to %n {
// CHECK:             arith.index_cast %n : index to i32
