// Every sched op in its custom syntax: printed, parsed again, printed identically.
// Each schedule is also a valid one for its te function (sched.schedule replays
// it when it verifies), written as TVM code would be.
// RUN: tilecraft-opt %s --split-input-file -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir --split-input-file | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// The generic form spells the handle types (!sched.stage, !sched.axis).
// RUN: %generic-roundtrip

// tile, split by a factor, reorder, and the three loop annotations.
func.func @matmul(%A: tensor<64x32xf32>, %B: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 32) -> f32 {
      %a = te.read %A[%i, %k] : tensor<64x32xf32>
      %b = te.read %B[%k, %j] : tensor<32x64xf32>
      %m = arith.mulf %a, %b : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<64x64xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %k = sched.axis %s "k"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 32, 16
    %ko, %ki = sched.split %k by 4
    sched.reorder %io, %jo, %ko, %ii, %ki, %ji
    sched.vectorize %ji
    sched.parallel %io
    sched.unroll %ki
  }
  func.return %C : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[C:.*]] = te.compute "C"
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[S:.*]] = sched.stage %[[C]] : tensor<64x64xf32>
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[S]] "i"
// CHECK-NEXT:      %[[J:.*]] = sched.axis %[[S]] "j"
// CHECK-NEXT:      %[[K:.*]] = sched.axis %[[S]] "k"
// CHECK-NEXT:      %[[IO:.*]], %[[JO:.*]], %[[II:.*]], %[[JI:.*]] = sched.tile %[[I]], %[[J]] by 32, 16
// CHECK-NEXT:      %[[KO:.*]], %[[KI:.*]] = sched.split %[[K]] by 4
// CHECK-NEXT:      sched.reorder %[[IO]], %[[JO]], %[[KO]], %[[II]], %[[KI]], %[[JI]]
// CHECK-NEXT:      sched.vectorize %[[JI]]
// CHECK-NEXT:      sched.parallel %[[IO]]
// CHECK-NEXT:      sched.unroll %[[KI]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C]] : tensor<64x64xf32>

// -----

// fuse, then split into a number of parts (the outer extent).
func.func @scale(%A: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<16x32xf32> {
    %a = te.read %A[%i, %j] : tensor<16x32xf32>
    %m = arith.mulf %a, %a : f32
    te.yield %m : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<16x32xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %f = sched.fuse %i, %j
    %o, %in = sched.split %f into 4
    sched.parallel %o
  }
  func.return %C : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @scale(
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[S:.*]] = sched.stage %{{.*}} : tensor<16x32xf32>
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[S]] "i"
// CHECK-NEXT:      %[[J:.*]] = sched.axis %[[S]] "j"
// CHECK-NEXT:      %[[F:.*]] = sched.fuse %[[I]], %[[J]]
// CHECK-NEXT:      %[[O:.*]], %{{.*}} = sched.split %[[F]] into 4
// CHECK-NEXT:      sched.parallel %[[O]]
// CHECK-NEXT:    }

// -----

// compute_inline of an injective producer; compute_at of a producer into a
// loop of its consumer.
func.func @chain(%A: tensor<64xf32>) -> tensor<64xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<64xf32> {
    %a = te.read %A[%i] : tensor<64xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<64xf32> {
    %b = te.read %B[%i] : tensor<64xf32>
    %n = arith.negf %b : f32
    te.yield %n : f32
  }
  %D = te.compute "D" (%i: "i") -> tensor<64xf32> {
    %c = te.read %C[%i] : tensor<64xf32>
    %m = arith.mulf %c, %c : f32
    te.yield %m : f32
  }
  sched.schedule {
    %sB = sched.stage %B : tensor<64xf32>
    %sC = sched.stage %C : tensor<64xf32>
    %sD = sched.stage %D : tensor<64xf32>
    sched.compute_inline %sB
    %i = sched.axis %sD "i"
    %io, %ii = sched.split %i by 8
    sched.compute_at %sC, %io
  }
  func.return %D : tensor<64xf32>
}

// CHECK-LABEL: func.func @chain(
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[SB:.*]] = sched.stage %{{.*}} : tensor<64xf32>
// CHECK-NEXT:      %[[SC:.*]] = sched.stage %{{.*}} : tensor<64xf32>
// CHECK-NEXT:      %[[SD:.*]] = sched.stage %{{.*}} : tensor<64xf32>
// CHECK-NEXT:      sched.compute_inline %[[SB]]
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[SD]] "i"
// CHECK-NEXT:      %[[IO:.*]], %{{.*}} = sched.split %[[I]] by 8
// CHECK-NEXT:      sched.compute_at %[[SC]], %[[IO]]
// CHECK-NEXT:    }

// -----

// cache_read of an input for its reader. The memory scope prints as a bare word;
// the quoted word of older text still parses.
func.func @cache_read(%A: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %a = te.read %A[%j, %i] : tensor<64x64xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sA = sched.stage %A : tensor<64x64xf32>
    %sC = sched.stage %C : tensor<64x64xf32>
    %AA = sched.cache_read %sA "shared" for %sC
    %i = sched.axis %sC "i"
    %j = sched.axis %sC "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 8, 8
    sched.compute_at %AA, %jo
  }
  func.return %C : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @cache_read(
// CHECK-SAME:      %[[A:.*]]: tensor<64x64xf32>) -> tensor<64x64xf32> {
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[SA:.*]] = sched.stage %[[A]] : tensor<64x64xf32>
// CHECK-NEXT:      %[[SC:.*]] = sched.stage %{{.*}} : tensor<64x64xf32>
// CHECK-NEXT:      %[[AA:.*]] = sched.cache_read %[[SA]] shared for %[[SC]]
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[SC]] "i"
// CHECK-NEXT:      %[[J:.*]] = sched.axis %[[SC]] "j"
// CHECK-NEXT:      %{{.*}}, %[[JO:.*]], %{{.*}}, %{{.*}} = sched.tile %[[I]], %[[J]] by 8, 8
// CHECK-NEXT:      sched.compute_at %[[AA]], %[[JO]]
// CHECK-NEXT:    }

// -----

// cache_write: the reduction is computed into a local buffer, at a loop of
// the copy that the original stage becomes.
func.func @cache_write(%A: tensor<32x16xf32>) -> tensor<32xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<32xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %a = te.read %A[%i, %k] : tensor<32x16xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %sC = sched.stage %C : tensor<32xf32>
    %CL = sched.cache_write %sC local
    %i = sched.axis %sC "i"
    %io, %ii = sched.split %i by 8
    sched.compute_at %CL, %io
  }
  func.return %C : tensor<32xf32>
}

// CHECK-LABEL: func.func @cache_write(
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[SC:.*]] = sched.stage %{{.*}} : tensor<32xf32>
// CHECK-NEXT:      %[[CL:.*]] = sched.cache_write %[[SC]] local
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[SC]] "i"
// CHECK-NEXT:      %[[IO:.*]], %{{.*}} = sched.split %[[I]] by 8
// CHECK-NEXT:      sched.compute_at %[[CL]], %[[IO]]
// CHECK-NEXT:    }

// -----

// Discardable attributes on the schedule and on every kind of primitive.
func.func @attributes(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule attributes {origin = "hand"} {
    %s = sched.stage %C {tag} : tensor<8x8xf32>
    %i = sched.axis %s "i" {tag}
    %j = sched.axis %s "j"
    %io, %ii = sched.split %i by 2 {tag}
    %jo, %ji = sched.split %j into 2 {tag}
    sched.reorder %io, %jo, %ii, %ji {tag}
    %f = sched.fuse %io, %jo {tag}
    sched.parallel %f {tag}
  }
  func.return %C : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @attributes(
// CHECK:         sched.schedule attributes {origin = "hand"} {
// CHECK-NEXT:      %[[S:.*]] = sched.stage %{{.*}} {tag} : tensor<8x8xf32>
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[S]] "i" {tag}
// CHECK-NEXT:      %[[J:.*]] = sched.axis %[[S]] "j"
// CHECK-NEXT:      %[[IO:.*]], %[[II:.*]] = sched.split %[[I]] by 2 {tag}
// CHECK-NEXT:      %[[JO:.*]], %[[JI:.*]] = sched.split %[[J]] into 2 {tag}
// CHECK-NEXT:      sched.reorder %[[IO]], %[[JO]], %[[II]], %[[JI]] {tag}
// CHECK-NEXT:      %[[F:.*]] = sched.fuse %[[IO]], %[[JO]] {tag}
// CHECK-NEXT:      sched.parallel %[[F]] {tag}
// CHECK-NEXT:    }

// -----

// Discardable attributes on the remaining primitives.
func.func @more_attributes(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %B = te.compute "B" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %b = te.read %B[%i, %j] : tensor<8x8xf32>
    te.yield %b : f32
  }
  %D = te.compute "D" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %c = te.read %C[%i, %j] : tensor<8x8xf32>
    te.yield %c : f32
  }
  sched.schedule {
    %sA = sched.stage %A : tensor<8x8xf32>
    %sB = sched.stage %B : tensor<8x8xf32>
    %sC = sched.stage %C : tensor<8x8xf32>
    %sD = sched.stage %D : tensor<8x8xf32>
    %AA = sched.cache_read %sA local for %sB {tag}
    %DL = sched.cache_write %sD "local" {tag}
    sched.compute_inline %sB {tag}
    %i = sched.axis %sD "i"
    %j = sched.axis %sD "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 4, 4 {tag}
    sched.compute_at %DL, %jo {tag}
    sched.vectorize %ji {tag}
    sched.unroll %ii {tag}
  }
  func.return %D : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @more_attributes(
// CHECK:         sched.schedule {
// CHECK-NEXT:      %[[SA:.*]] = sched.stage %{{.*}} : tensor<8x8xf32>
// CHECK-NEXT:      %[[SB:.*]] = sched.stage %{{.*}} : tensor<8x8xf32>
// CHECK-NEXT:      %{{.*}} = sched.stage %{{.*}} : tensor<8x8xf32>
// CHECK-NEXT:      %[[SD:.*]] = sched.stage %{{.*}} : tensor<8x8xf32>
// CHECK-NEXT:      %{{.*}} = sched.cache_read %[[SA]] local for %[[SB]] {tag}
// CHECK-NEXT:      %[[DL:.*]] = sched.cache_write %[[SD]] local {tag}
// CHECK-NEXT:      sched.compute_inline %[[SB]] {tag}
// CHECK-NEXT:      %[[I:.*]] = sched.axis %[[SD]] "i"
// CHECK-NEXT:      %[[J:.*]] = sched.axis %[[SD]] "j"
// CHECK-NEXT:      %{{.*}}, %[[JO:.*]], %[[II:.*]], %[[JI:.*]] = sched.tile %[[I]], %[[J]] by 4, 4 {tag}
// CHECK-NEXT:      sched.compute_at %[[DL]], %[[JO]] {tag}
// CHECK-NEXT:      sched.vectorize %[[JI]] {tag}
// CHECK-NEXT:      sched.unroll %[[II]] {tag}
// CHECK-NEXT:    }
