// Every llvmx op in its custom syntax: printed, parsed again, printed identically.
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir

func.func @ops(%p: !llvm.ptr, %x: vector<8xf32>, %y: vector<8xf32>, %u: vector<8xi32>, %o: vector<8xi64>, %i: i64, %s: f64) {
  %a = llvmx.fptosi %x : vector<8xf32> to vector<8xi32>
  %b = llvmx.fptoui %s : f64 to i64
  %c = llvmx.uitofp %u : vector<8xi32> to vector<8xf32>
  %m = llvmx.fcmp "olt" %x, %y : vector<8xf32> -> vector<8xi1>
  %d = llvmx.select %m, %x, %y : vector<8xi1>, vector<8xf32>
  %e = llvmx.extractelement %d[%i : i64] : vector<8xf32> -> f32
  %f = llvmx.masked_load %p, %m, %x {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
  llvmx.masked_store %f, %p, %m {alignment = 4 : i32} : vector<8xf32>, !llvm.ptr, vector<8xi1>
  %g = llvmx.masked_gather %p[%o], %m, %x {alignment = 4 : i32, elem_type = f32} : (!llvm.ptr, vector<8xi64>, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
  llvmx.masked_scatter %g, %p[%o], %m {alignment = 4 : i32, elem_type = f32} : vector<8xf32>, !llvm.ptr, vector<8xi64>, vector<8xi1>
  func.return
}

// CHECK:      %a = llvmx.fptosi %x : vector<8xf32> to vector<8xi32>
// CHECK-NEXT: %b = llvmx.fptoui %s : f64 to i64
// CHECK-NEXT: %c = llvmx.uitofp %u : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: %m = llvmx.fcmp "olt" %x, %y : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT: %d = llvmx.select %m, %x, %y : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: %e = llvmx.extractelement %d[%i : i64] : vector<8xf32> -> f32
// CHECK-NEXT: %f = llvmx.masked_load %p, %m, %x {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: llvmx.masked_store %f, %p, %m {alignment = 4 : i32} : vector<8xf32>, !llvm.ptr, vector<8xi1>
// CHECK-NEXT: %g = llvmx.masked_gather %p[%o], %m, %x {alignment = 4 : i32, elem_type = f32} : (!llvm.ptr, vector<8xi64>, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: llvmx.masked_scatter %g, %p[%o], %m {alignment = 4 : i32, elem_type = f32} : vector<8xf32>, !llvm.ptr, vector<8xi64>, vector<8xi1>
