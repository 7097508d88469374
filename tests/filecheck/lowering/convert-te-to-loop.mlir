// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop | filecheck %s

// No schedule: one serial loop per axis; tensors become memrefs, inputs then outputs.
func.func @add(%A: tensor<8xf32>, %B: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %b = te.read %B[%i] : tensor<8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8xf32>
}

// CHECK-LABEL: func.func @add(%A: memref<8xf32> {tc.name = "A"}, %B: memref<8xf32> {tc.name = "B"}, %C: memref<8xf32> {tc.name = "C"}) {
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 8 {
// CHECK-NEXT:      %[[A:.*]] = memref.load %A[%[[I]]] : memref<8xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %B[%[[I]]] : memref<8xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      memref.store %[[S]], %C[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A split that divides its extent: no guard; the index is outer * factor + inner,
// with the product hoisted to the outer loop.
func.func @split(%A: tensor<32xf32>) -> tensor<32xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<32xf32> {
    %a = te.read %A[%i] : tensor<32xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<32xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 8
    sched.vectorize %n
    sched.parallel %o
  }
  func.return %C : tensor<32xf32>
}

// CHECK-LABEL: func.func @split
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    loop.for %[[O:.*]] = 0 to 4 parallel {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[O]], %[[C8]] : index
// CHECK-NEXT:      loop.for %[[N:.*]] = 0 to 8 vectorized {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[BASE]], %[[N]] : index
// CHECK-NEXT:        %[[A:.*]] = memref.load %A[%[[I]]] : memref<32xf32>
// CHECK-NEXT:        memref.store %[[A]], %C[%[[I]]] : memref<32xf32>
// CHECK-NOT:     loop.guard

// -----

// nparts that do not divide the extent: 3 parts of 4 cover 10 elements, so the
// body is guarded by i < 10.
func.func @split_nparts(%A: tensor<10xf32>) -> tensor<10xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<10xf32> {
    %a = te.read %A[%i] : tensor<10xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<10xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i into 3
    sched.unroll %n
  }
  func.return %C : tensor<10xf32>
}

// CHECK-LABEL: func.func @split_nparts
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK:         loop.for %[[O:.*]] = 0 to 3 {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[O]], %[[C4]] : index
// CHECK-NEXT:      loop.for %[[N:.*]] = 0 to 4 unrolled {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[BASE]], %[[N]] : index
// CHECK-NEXT:        %[[IN:.*]] = arith.cmpi slt, %[[I]], %[[C10]] : index
// CHECK-NEXT:        loop.guard %[[IN]] {
// CHECK-NEXT:          memref.load %A[%[[I]]]
// CHECK-NEXT:          memref.store

// -----

// tile = two splits and a reorder: io, jo, ii, ji.
func.func @tile(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%j, %i] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 4, 2
  }
  func.return %C : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @tile
// CHECK:         loop.for %[[IO:i.outer]] = 0 to 2 {
// CHECK:           loop.for %[[JO:j.outer]] = 0 to 4 {
// CHECK:             loop.for %[[II:i.inner]] = 0 to 4 {
// CHECK:               loop.for %[[JI:j.inner]] = 0 to 2 {
// CHECK:                 %[[A:.*]] = memref.load %A[%[[J:.*]], %[[I:.*]]] : memref<8x8xf32>
// CHECK-NEXT:            memref.store %[[A]], %C[%[[I]], %[[J]]] : memref<8x8xf32>

// -----

// fuse: one loop over 6 x 4; the indices are fused // 4 and fused mod 4.
func.func @fuse(%A: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<6x4xf32> {
    %a = te.read %A[%i, %j] : tensor<6x4xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<6x4xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %f = sched.fuse %i, %j
    sched.parallel %f
  }
  func.return %C : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @fuse
// CHECK:         loop.for %[[F:.*]] = 0 to 24 parallel {
// CHECK-DAG:       %[[I:.*]] = arith.floordivsi %[[F]], %{{.*}} : index
// CHECK-DAG:       %[[J:.*]] = arith.remsi %[[F]], %{{.*}} : index
// CHECK:           memref.load %A[%[[I]], %[[J]]]

// -----

// A reduction: the init nest sits just outside the first reduce loop and repeats
// the spatial loops inside it; the update accumulates into the output.
func.func @rowsum(%A: tensor<4x16xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 16) -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x16xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<4xf32>
    %i = sched.axis %s "i"
    %k = sched.axis %s "k"
    sched.reorder %k, %i
    sched.vectorize %i
  }
  func.return %C : tensor<4xf32>
}

// CHECK-LABEL: func.func @rowsum
// CHECK:         loop.for %[[I0:.*]] = 0 to 4 vectorized {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[Z]], %C[%[[I0]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[K:.*]] = 0 to 16 {
// CHECK-NEXT:      loop.for %[[I:.*]] = 0 to 4 vectorized {
// CHECK-NEXT:        %[[A:.*]] = memref.load %A[%[[I]], %[[K]]] : memref<4x16xf32>
// CHECK-NEXT:        %[[ACC:.*]] = memref.load %C[%[[I]]] : memref<4xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %C[%[[I]]] : memref<4xf32>

// -----

// max and min reductions start from -inf / +inf.
func.func @rowmax(%A: tensor<4x16xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce max (%k: "k" = 0 to 16) -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x16xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<4xf32>
}

// CHECK-LABEL: func.func @rowmax
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         arith.maximumf

// -----

// compute_at with a stencil: B is computed per tile of 4 outputs of C, over the
// 6 elements (4 + 3 - 1) that the tile reads, into a buffer offset by
// the tile's start. Its schedule chose no scope and it is small: "local" (stack).
func.func @stencil(%A: tensor<18xf32>) -> tensor<16xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<18xf32> {
    %a = te.read %A[%i] : tensor<18xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<16xf32> {
    %s = te.reduce sum (%r: "r" = 0 to 3) -> f32 {
      %x = arith.addi %i, %r : index
      %b = te.read %B[%x] : tensor<18xf32>
      te.yield %b : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<16xf32>
    %sb = sched.stage %B : tensor<18xf32>
    %i = sched.axis %sc "i"
    %o, %n = sched.split %i by 4
    sched.compute_at %sb, %o
  }
  func.return %C : tensor<16xf32>
}

// CHECK-LABEL: func.func @stencil
// CHECK:         loop.for %[[O:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[BUF:.*]] = loop.alloc "B" local : memref<6xf32>
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[O]], %{{.*}} : index
// CHECK-NEXT:      loop.for %[[X:.*]] = 0 to 6 {
// CHECK-NEXT:        %[[G:.*]] = arith.addi %[[BASE]], %[[X]] : index
// CHECK-NEXT:        %[[A:.*]] = memref.load %A[%[[G]]] : memref<18xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:        memref.store %[[E]], %[[BUF]][%[[X]]] : memref<6xf32>
// CHECK-NEXT:      }
// CHECK:           loop.for %[[N:.*]] = 0 to 4 {
// CHECK:             loop.for %[[R:.*]] = 0 to 3 {
// The read of B[i + r] becomes BUF[inner + r]: the tile offset cancels.
// CHECK:               %[[L:.*]] = arith.addi %[[N]], %[[R]] : index
// CHECK-NEXT:          memref.load %[[BUF]][%[[L]]] : memref<6xf32>

// -----

// An intermediate stage at the root gets a whole-tensor global buffer.
func.func @two_stages(%A: tensor<8xf32>) -> tensor<8xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %b = te.read %B[%i] : tensor<8xf32>
    te.yield %b : f32
  }
  func.return %C : tensor<8xf32>
}

// CHECK-LABEL: func.func @two_stages
// CHECK-NEXT:    %[[B:.*]] = loop.alloc "B" global : memref<8xf32>
// CHECK-NEXT:    loop.for
// CHECK:           memref.store %{{.*}}, %[[B]][%{{.*}}]
// CHECK:         loop.for
// CHECK:           memref.load %[[B]]

// -----

// cache_write + cache_read + compute_at: the register tile C.local (8x16) is
// computed per (i.outer, j.outer); B is packed per k.outer into a 4x16 buffer;
// C copies its tile out of C.local.
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
    %CL = sched.cache_write %s "local"
    %sb = sched.stage %B : tensor<32x64xf32>
    %BB = sched.cache_read %sb "global" for %CL
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 8, 16
    sched.compute_at %CL, %jo
    %ci = sched.axis %CL "i"
    %cj = sched.axis %CL "j"
    %ck = sched.axis %CL "k"
    %ko, %ki = sched.split %ck by 4
    sched.reorder %ko, %ki, %ci, %cj
    sched.compute_at %BB, %ko
    sched.unroll %ci
    sched.vectorize %cj
    sched.parallel %io
  }
  func.return %C : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @matmul
// CHECK:         loop.for %[[IO:.*]] = 0 to 8 parallel {
// CHECK:           loop.for %[[JO:.*]] = 0 to 4 {
// CHECK-NEXT:        %[[CL:.*]] = loop.alloc "C.local" local : memref<8x16xf32>
// CHECK-NEXT:        loop.for %{{.*}} = 0 to 8 unrolled {
// CHECK-NEXT:          loop.for %{{.*}} = 0 to 16 vectorized {
// CHECK-NEXT:            arith.constant 0.000000e+00 : f32
// CHECK-NEXT:            memref.store %{{.*}}, %[[CL]]
// CHECK:             loop.for %[[KO:.*]] = 0 to 8 {
// CHECK-NEXT:          %[[BB:.*]] = loop.alloc "B.global" global : memref<4x16xf32>
// CHECK:               loop.for %[[AX0:.*]] = 0 to 4 {
// CHECK:                 loop.for %[[AX1:.*]] = 0 to 16 {
// CHECK:                   memref.store %{{.*}}, %[[BB]][%[[AX0]], %[[AX1]]] : memref<4x16xf32>
// CHECK:               loop.for %[[KI:.*]] = 0 to 4 {
// CHECK:                 loop.for %[[CI:.*]] = 0 to 8 unrolled {
// CHECK:                   loop.for %[[CJ:.*]] = 0 to 16 vectorized {
// CHECK:                     memref.load %[[BB]][%[[KI]], %[[CJ]]] : memref<4x16xf32>
// CHECK:                     memref.load %[[CL]][%[[CI]], %[[CJ]]] : memref<8x16xf32>
// CHECK:           loop.for %[[II:.*]] = 0 to 8 {
// CHECK:             loop.for %[[JI:.*]] = 0 to 16 {
// CHECK:               memref.load %[[CL]][%[[II]], %[[JI]]] : memref<8x16xf32>
// CHECK-NEXT:          memref.store %{{.*}}, %C[%{{.*}}, %{{.*}}] : memref<64x64xf32>

// -----

// scf.if keeps a read lazy: the padded read happens only in bounds.
func.func @pad(%A: tensor<4xf32>) -> tensor<6xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<6xf32> {
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %lo = arith.cmpi sge, %i, %c1 : index
    %hi = arith.cmpi slt, %i, %c5 : index
    %in = arith.andi %lo, %hi : i1
    %v = scf.if %in -> (f32) {
      %x = arith.subi %i, %c1 : index
      %a = te.read %A[%x] : tensor<4xf32>
      scf.yield %a : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    te.yield %v : f32
  }
  func.return %C : tensor<6xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK:         loop.for %[[I:.*]] = 0 to 6 {
// CHECK:           %[[V:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:             %[[A:.*]] = memref.load %A[%{{.*}}] : memref<4xf32>
// CHECK-NEXT:        scf.yield %[[A]] : f32
// CHECK-NEXT:      } else {
// CHECK:           memref.store %[[V]], %C[%[[I]]] : memref<6xf32>

// -----

// A vectorized axis with loops inside it is sunk to the innermost position (its
// iterations are independent), as vectorizing it means: here j runs inside k.
func.func @vec_outer(%A: tensor<4x8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%j: "j") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
      %a = te.read %A[%k, %j] : tensor<4x8xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %j = sched.axis %s "j"
    sched.vectorize %j
  }
  func.return %C : tensor<8xf32>
}

// CHECK-LABEL: func.func @vec_outer
// CHECK:         loop.for %{{.*}} = 0 to 8 vectorized {
// CHECK:         loop.for %[[K:.*]] = 0 to 4 {
// CHECK-NEXT:      loop.for %[[J:.*]] = 0 to 8 vectorized {
// CHECK-NEXT:        memref.load %A[%[[K]], %[[J]]]

// -----

// compute_at a stage at a loop that encloses its reader's attach point: B is
// packed once per j.outer (all of k, a 16-wide column block) for every i.outer
// tile of C.local inside.
func.func @pack(%A: tensor<64x32xf32>, %B: tensor<32x64xf32>) -> tensor<64x64xf32> {
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
    %CL = sched.cache_write %s "local"
    %sb = sched.stage %B : tensor<32x64xf32>
    %BB = sched.cache_read %sb "global" for %CL
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    %io, %jo, %ii, %ji = sched.tile %i, %j by 8, 16
    sched.reorder %jo, %io
    sched.compute_at %CL, %io
    sched.compute_at %BB, %jo
    sched.parallel %jo
  }
  func.return %C : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @pack
// CHECK:         loop.for %[[JO:.*]] = 0 to 4 parallel {
// CHECK-NEXT:      %[[BB:.*]] = loop.alloc "B.global" global : memref<32x16xf32>
// CHECK:           loop.for %[[IO:.*]] = 0 to 8 {
// CHECK-NEXT:        %[[CL:.*]] = loop.alloc "C.local" local : memref<8x16xf32>
// CHECK:               memref.load %[[BB]][%{{.*}}, %{{.*}}] : memref<32x16xf32>

// -----

// Inlining the copy a cache_write leaves behind: the fused epilogue (relu) reads
// the accumulators C.local directly, with no copy buffer in between.
func.func @epilogue(%A: tensor<8x4xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
      %a = te.read %A[%i, %k] : tensor<8x4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  %R = te.compute "R" (%i: "i") -> tensor<8xf32> {
    %c = te.read %C[%i] : tensor<8xf32>
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %c, %z : f32
    te.yield %r : f32
  }
  sched.schedule {
    %sc = sched.stage %C : tensor<8xf32>
    %sr = sched.stage %R : tensor<8xf32>
    %CL = sched.cache_write %sc "local"
    sched.compute_inline %sc
    %i = sched.axis %sr "i"
    %o, %n = sched.split %i by 4
    sched.compute_at %CL, %o
  }
  func.return %R : tensor<8xf32>
}

// CHECK-LABEL: func.func @epilogue
// CHECK:         loop.for %[[O:.*]] = 0 to 2 {
// CHECK-NEXT:      %[[CL:.*]] = loop.alloc "C.local" local : memref<4xf32>
// CHECK:           loop.for %[[N:i.inner]] = 0 to 4 {
// CHECK:             %[[V:.*]] = memref.load %[[CL]][%[[N]]] : memref<4xf32>
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        arith.maximumf %[[V]], %[[Z]] : f32
// CHECK-NOT:     loop.alloc "C"

// -----

// Index division by what the loops know: with i split by 16, i // 16 is the outer
// loop variable and i % 16 the inner one (no div/mod left); with a split by 8 the
// remainder may reach 16, so both stay.
func.func @unblock(%A: tensor<4x16xf32>) -> tensor<64xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<64xf32> {
    %c16 = arith.constant 16 : index
    %q = arith.floordivsi %i, %c16 : index
    %r = arith.remsi %i, %c16 : index
    %a = te.read %A[%q, %r] : tensor<4x16xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %B : tensor<64xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 16
  }
  func.return %B : tensor<64xf32>
}

// CHECK-LABEL: func.func @unblock
// CHECK:         loop.for %[[O:.*]] = 0 to 4 {
// CHECK:           loop.for %[[N:.*]] = 0 to 16 {
// CHECK-NOT:         arith.floordivsi
// CHECK-NOT:         arith.remsi
// CHECK:             memref.load %A[%[[O]], %[[N]]] : memref<4x16xf32>

// -----

func.func @still_blocked(%A: tensor<4x16xf32>) -> tensor<64xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<64xf32> {
    %c16 = arith.constant 16 : index
    %q = arith.floordivsi %i, %c16 : index
    %r = arith.remsi %i, %c16 : index
    %a = te.read %A[%q, %r] : tensor<4x16xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %B : tensor<64xf32>
    %i = sched.axis %s "i"
    %o, %n = sched.split %i by 8
  }
  func.return %B : tensor<64xf32>
}

// CHECK-LABEL: func.func @still_blocked
// CHECK:           %[[Q:.*]] = arith.floordivsi
// CHECK:           %[[R:.*]] = arith.remsi
// CHECK:           memref.load %A[%[[Q]], %[[R]]] : memref<4x16xf32>

// -----

// A function that calls a te function (a model's graph function) keeps working on
// tensors; each call is bridged to the kernel's memref convention (operands
// through to_buffer, the result written into a fresh buffer and read back with
// to_tensor), its attributes kept, for bufferize-graph-function to place.
// CHECK-LABEL: func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %[[XB:.*]] = bufferization.to_buffer %x : tensor<4xf32> to memref<4xf32>
// CHECK-NEXT:    %[[YB:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    func.call @neg(%[[XB]], %[[YB]]) {tc.offsets = array<i64: -1>} : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    %[[Y:.*]] = bufferization.to_tensor %[[YB]] : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf32>
// CHECK-LABEL: func.func @neg(%p0: memref<4xf32> {tc.name = "p0"}, %n: memref<4xf32> {tc.name = "n"}) {
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[V:.*]] = memref.load %p0[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT:      memref.store %[[N]], %n[%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @neg(%x) {tc.offsets = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @neg(%p0: tensor<4xf32>) -> tensor<4xf32> {
  %n = te.compute "n" (%i: "i") -> tensor<4xf32> {
    %0 = te.read %p0[%i] : tensor<4xf32>
    %1 = arith.negf %0 : f32
    te.yield %1 : f32
  }
  func.return %n : tensor<4xf32>
}

// -----

// `%` of te is floor modulo: an index `(i - 1) mod 8` that may be negative before
// the modulo becomes remsi plus the divisor where the remainder is negative; one
// that is never negative (`i + 3`) stays a plain remsi. On values, te.floormod
// becomes the general form (the divisor's sign decides).
func.func @floor_mod(%A: tensor<8xi32>) -> tensor<8xi32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xi32> {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %m = arith.subi %i, %c1 : index
    %w = te.floormod %m, %c8 : index
    %p = arith.addi %i, %c3 : index
    %v = te.floormod %p, %c8 : index
    %a = te.read %A[%w] : tensor<8xi32>
    %b = te.read %A[%v] : tensor<8xi32>
    %r = te.floormod %a, %b : i32
    te.yield %r : i32
  }
  func.return %B : tensor<8xi32>
}

// CHECK-LABEL: func.func @floor_mod
// CHECK:         loop.for %[[I:.*]] = 0 to 8 {
// CHECK:           %[[M:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %[[M]], %[[C8:.*]] : index
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[R]], %{{.*}} : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[R]], %[[C8]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[R]] : index
// CHECK-NEXT:      %[[A:.*]] = memref.load %A[%[[W]]] : memref<8xi32>
// CHECK:           %[[V:.*]] = arith.remsi %{{.*}}, %[[C8]] : index
// CHECK-NEXT:      %[[B:.*]] = memref.load %A[%[[V]]] : memref<8xi32>
// CHECK-NEXT:      %[[REM:.*]] = arith.remsi %[[A]], %[[B]] : i32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[NZ:.*]] = arith.cmpi ne, %[[REM]], %[[Z]] : i32
// CHECK-NEXT:      %[[X:.*]] = arith.xori %[[REM]], %[[B]] : i32
// CHECK-NEXT:      %[[DIFF:.*]] = arith.cmpi slt, %[[X]], %[[Z]] : i32
// CHECK-NEXT:      %[[ADJ:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK-NEXT:      %[[ADD:.*]] = arith.addi %[[REM]], %[[B]] : i32
// CHECK-NEXT:      %{{.*}} = arith.select %[[ADJ]], %[[ADD]], %[[REM]] : i32

// -----

// Splitting the loop a stage is computed at moves the stage to the split's outer
// part: B is produced once per iteration of i.outer.outer, for the 8 elements the
// two inner loops read.
func.func @split_after_compute_at(%A: tensor<16xf32>) -> tensor<16xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<16xf32> {
    %a = te.read %A[%i] : tensor<16xf32>
    te.yield %a : f32
  }
  %C = te.compute "C" (%i: "i") -> tensor<16xf32> {
    %b = te.read %B[%i] : tensor<16xf32>
    te.yield %b : f32
  }
  sched.schedule {
    %sb = sched.stage %B : tensor<16xf32>
    %sc = sched.stage %C : tensor<16xf32>
    %i = sched.axis %sc "i"
    %io, %ii = sched.split %i by 4
    sched.compute_at %sb, %io
    %ioo, %ioi = sched.split %io by 2
  }
  func.return %C : tensor<16xf32>
}

// CHECK-LABEL: func.func @split_after_compute_at
// CHECK:         loop.for %[[IOO:.*]] = 0 to 2 {
// CHECK-NEXT:      %[[BUF:.*]] = loop.alloc "B" local : memref<8xf32>
// CHECK:           loop.for %{{.*}} = 0 to 8 {
// CHECK:           loop.for %{{.*}} = 0 to 2 {
// CHECK:             loop.for %{{.*}} = 0 to 4 {
// CHECK:               memref.load %[[BUF]]
