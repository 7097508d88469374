// sched.bind: printed, parsed again, printed identically; replayed by
// convert-te-to-loop into loops of the bound kinds, which print and parse too.
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// RUN: tilecraft-opt %s -p convert-te-to-loop -o %t.loop.mlir
// RUN: tilecraft-opt %t.loop.mlir | diff %t.loop.mlir -
// RUN: filecheck %s --check-prefix=LOOP --input-file %t.loop.mlir

func.func @scale(%A: tensor<100x70xf32>) -> tensor<100x70xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<100x70xf32> {
    %a = te.read %A[%i, %j] : tensor<100x70xf32>
    %m = arith.mulf %a, %a : f32
    te.yield %m : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<100x70xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 8, 16
    sched.bind %io to "blockIdx.y"
    sched.bind %jo to "blockIdx.x"
    sched.bind %ii to "threadIdx.y"
    sched.bind %ji to "threadIdx.x"
  }
  func.return %C : tensor<100x70xf32>
}

// CHECK:       %[[IO:.*]], %[[JO:.*]], %[[II:.*]], %[[JI:.*]] = sched.tile
// CHECK-NEXT:  sched.bind %[[IO]] to "blockIdx.y"
// CHECK-NEXT:  sched.bind %[[JO]] to "blockIdx.x"
// CHECK-NEXT:  sched.bind %[[II]] to "threadIdx.y"
// CHECK-NEXT:  sched.bind %[[JI]] to "threadIdx.x"

// LOOP:        loop.for %{{.*}} = 0 to 13 blockIdx.y {
// LOOP:        loop.for %{{.*}} = 0 to 5 blockIdx.x {
// LOOP:        loop.for %{{.*}} = 0 to 8 threadIdx.y {
// LOOP:        loop.for %{{.*}} = 0 to 16 threadIdx.x {
// LOOP:        loop.guard
