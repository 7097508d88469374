// One case per llvmx verifier error: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

func.func @cast_lanes(%x: vector<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: {{.*}}llvmx.fptosi must cast a scalar to a scalar or a vector to a vector of the same length.
  %a = llvmx.fptosi %x : vector<8xf32> to vector<4xi32>
  func.return
}

// -----

func.func @predicate(%x: f32) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: {{.*}}llvmx.fcmp predicate must be one of false, oeq,
  %m = llvmx.fcmp "less" %x, %x : f32 -> i1
  func.return
}

// -----

func.func @select_lanes(%m: vector<4xi1>, %x: vector<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: {{.*}}llvmx.select needs as many condition lanes as value lanes.
  %d = llvmx.select %m, %x, %x : vector<4xi1>, vector<8xf32>
  func.return
}

// -----

func.func @mask_lanes(%p: !llvm.ptr, %m: vector<4xi1>, %x: vector<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: {{.*}}llvmx.masked_load needs a mask with one lane per value lane.
  %f = llvmx.masked_load %p, %m, %x {alignment = 4 : i32} : (!llvm.ptr, vector<4xi1>, vector<8xf32>) -> vector<8xf32>
  func.return
}

// -----

func.func @offset_lanes(%p: !llvm.ptr, %m: vector<8xi1>, %o: vector<4xi64>, %x: vector<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: {{.*}}llvmx.masked_scatter needs a mask with one lane per value lane.
  llvmx.masked_scatter %x, %p[%o], %m {alignment = 4 : i32, elem_type = f32} : vector<8xf32>, !llvm.ptr, vector<4xi64>, vector<8xi1>
  func.return
}
