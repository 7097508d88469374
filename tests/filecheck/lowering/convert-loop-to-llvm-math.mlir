// RUN: tilecraft-opt %s --split-input-file -p loop-vectorize,convert-loop-to-llvm | filecheck %s
// The math functions without an f32 polynomial: LLVM's intrinsics where LLVM has
// one (tan, asin, acos, atan, sinh, cosh: libm calls in the end), libm by name
// otherwise (asinh, acosh, atanh; `f` for f32, f16 through f32), once per lane on
// vectors. Float fmod is llvm.frem, which stays a vector instruction.

func.func @scalar(%A: memref<4xf32>, %D: memref<4xf64>, %H: memref<4xf16>) {
  loop.for %i = 0 to 4 {
    %a = memref.load %A[%i] : memref<4xf32>
    %t = math.tan %a : f32
    %s = math.asinh %t : f32
    %r = llvm.frem %s, %a : f32
    memref.store %r, %A[%i] : memref<4xf32>
    %d = memref.load %D[%i] : memref<4xf64>
    %e = math.atanh %d : f64
    %c = math.cosh %e : f64
    memref.store %c, %D[%i] : memref<4xf64>
    %h = memref.load %H[%i] : memref<4xf16>
    %k = math.acosh %h : f16
    memref.store %k, %H[%i] : memref<4xf16>
  }
  func.return
}

// CHECK-LABEL: llvm.func @scalar(
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tan.f32"(%[[A]]) : (f32) -> f32
// CHECK-NEXT:    %[[S:.*]] = llvm.call @asinhf(%[[T]]) : (f32) -> f32
// CHECK-NEXT:    llvm.frem %[[S]], %[[A]] : f32
// CHECK:         %[[D:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> f64
// CHECK-NEXT:    %[[E:.*]] = llvm.call @atanh(%[[D]]) : (f64) -> f64
// CHECK-NEXT:    llvm.call_intrinsic "llvm.cosh.f64"(%[[E]]) : (f64) -> f64
// CHECK:         %[[H:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> f16
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.fpext %[[H]] : f16 to f32
// CHECK-NEXT:    %[[K:.*]] = llvm.call @acoshf(%[[WIDE]]) : (f32) -> f32
// CHECK-NEXT:    llvm.fptrunc %[[K]] : f32 to f16
// CHECK-DAG:   llvm.func @asinhf(f32) -> f32
// CHECK-DAG:   llvm.func @atanh(f64) -> f64
// CHECK-DAG:   llvm.func @acoshf(f32) -> f32

// -----

func.func @vector(%A: memref<4xf32>, %D: memref<4xf64>, %H: memref<4xf16>) {
  loop.for %i = 0 to 4 vectorized {
    %a = memref.load %A[%i] : memref<4xf32>
    %t = math.tan %a : f32
    %s = math.asinh %t : f32
    %r = llvm.frem %s, %a : f32
    memref.store %r, %A[%i] : memref<4xf32>
    %d = memref.load %D[%i] : memref<4xf64>
    %e = math.atanh %d : f64
    %c = math.cosh %e : f64
    memref.store %c, %D[%i] : memref<4xf64>
    %h = memref.load %H[%i] : memref<4xf16>
    %k = math.acosh %h : f16
    memref.store %k, %H[%i] : memref<4xf16>
  }
  func.return
}

// CHECK-LABEL: llvm.func @vector(
// CHECK:         %[[V:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tan.v4f32"(%[[V]]) : (vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT:    %[[L0:.*]] = llvmx.extractelement %[[T]][%{{.*}} : i64] : vector<4xf32> -> f32
// CHECK-NEXT:    %[[S0:.*]] = llvm.call @asinhf(%[[L0]]) : (f32) -> f32
// CHECK-NEXT:    llvm.insertelement %[[S0]], %{{.*}}[%{{.*}} : i64] : vector<4xf32>
// CHECK-COUNT-3: llvm.call @asinhf
// CHECK:         %[[S:.*]] = llvm.insertelement
// CHECK-NEXT:    llvm.frem %[[S]], %[[V]] : vector<4xf32>
// CHECK:         llvm.fpext %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-COUNT-4: llvm.call @acoshf
// CHECK:         llvm.fptrunc %{{.*}} : vector<4xf32> to vector<4xf16>
