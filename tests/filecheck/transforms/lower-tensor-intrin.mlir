// RUN: tilecraft-opt %s --split-input-file -p lower-tensor-intrin | filecheck %s
// With the passes loop-to-llvm runs next, the default kernel is straight-line
// vector code: the 4x16x8 float tile is 32 16-lane multiply-adds (LLVM fuses them
// into FMAs and keeps the 4 accumulator rows in registers).
// RUN: tilecraft-opt %s --split-input-file -p lower-tensor-intrin,loop-unroll,loop-vectorize | filecheck %s --check-prefix=VEC
// Each loop.tensor_intrin becomes its intrinsic's "llvm" LoopKernel: one loop per
// intrinsic axis with the kernel's kinds (built-ins: the innermost spatial axis
// vectorized, the others unrolled), the te body reading base + index of each region.

func.func @gemm(%A: memref<8x16xf32>, %B: memref<16x32xf32>, %C: memref<8x32xf32>, %i0: index, %j0: index, %k0: index) {
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i0, %k0], %B[%k0, %j0]) outs(%C[%i0, %j0]) : memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>
  func.return
}

// VEC-LABEL: func.func @gemm
// VEC-NOT:     loop.for
// VEC-COUNT-32: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// VEC-NOT:     arith.mulf
// VEC:         func.return

// CHECK-LABEL: func.func @gemm
// The output's indices come first (the output is addressed before the reduction's body).
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 unrolled {
// CHECK-NEXT:      loop.for %[[K:.*]] = 0 to 8 unrolled {
// CHECK-NEXT:        loop.for %[[J:.*]] = 0 to 16 vectorized {
// CHECK-NEXT:          %[[AI:.*]] = arith.addi %i0, %[[I]] : index
// CHECK-NEXT:          %[[BK:.*]] = arith.addi %j0, %[[J]] : index
// CHECK-NEXT:          %[[AK:.*]] = arith.addi %k0, %[[K]] : index
// CHECK-NEXT:          %[[A:.*]] = memref.load %A[%[[AI]], %[[AK]]] : memref<8x16xf32>
// CHECK-NEXT:          %[[B:.*]] = memref.load %B[%[[AK]], %[[BK]]] : memref<16x32xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[C:.*]] = memref.load %C[%[[AI]], %[[BK]]] : memref<8x32xf32>
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[C]], %[[P]] : f32
// CHECK-NEXT:          memref.store %[[S]], %C[%[[AI]], %[[BK]]] : memref<8x32xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// int8 x int8 summed in int32; the intrinsic's 1x16 input sits in the last two
// dimensions of a 3-D buffer, whose leading index stays at its base (%n).
func.func @gemv(%X: memref<3x2x32xi8>, %W: memref<48x32xi8>, %C: memref<2x48xi32>, %n: index, %b: index, %j0: index, %k0: index) {
  loop.tensor_intrin "gemv_1x16x16_i8" ins(%X[%n, %b, %k0], %W[%j0, %k0]) outs(%C[%b, %j0]) : memref<3x2x32xi8>, memref<48x32xi8>, memref<2x48xi32>
  func.return
}

// CHECK-LABEL: func.func @gemv
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 1 unrolled {
// CHECK-NEXT:      loop.for %[[K:.*]] = 0 to 16 unrolled {
// CHECK-NEXT:        loop.for %[[J:.*]] = 0 to 16 vectorized {
// The output's indices come first (the output is addressed before the reduction's body).
// CHECK-NEXT:          %[[XB:.*]] = arith.addi %b, %[[I]] : index
// CHECK-NEXT:          %[[WJ:.*]] = arith.addi %j0, %[[J]] : index
// CHECK-NEXT:          %[[XK:.*]] = arith.addi %k0, %[[K]] : index
// CHECK-NEXT:          %[[X:.*]] = memref.load %X[%n, %[[XB]], %[[XK]]] : memref<3x2x32xi8>
// CHECK-NEXT:          %[[X32:.*]] = arith.extsi %[[X]] : i8 to i32
// CHECK-NEXT:          %[[W:.*]] = memref.load %W[%[[WJ]], %[[XK]]] : memref<48x32xi8>
// CHECK-NEXT:          %[[W32:.*]] = arith.extsi %[[W]] : i8 to i32
// CHECK-NEXT:          %[[P:.*]] = arith.muli %[[X32]], %[[W32]] : i32
// CHECK-NEXT:          %[[C:.*]] = memref.load %C[%[[XB]], %[[WJ]]] : memref<2x48xi32>
// CHECK-NEXT:          %[[S:.*]] = arith.addi %[[C]], %[[P]] : i32
// CHECK-NEXT:          memref.store %[[S]], %C[%[[XB]], %[[WJ]]] : memref<2x48xi32>
