// One case per sched op verifier error: the message and the file:line:col of
// the op. (Errors that need the te program, found by replaying the schedule,
// are tested with tilecraft/dialects/sched_replay.py.)
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

func.func @split_neither(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.split' op: sched.split takes exactly one of a factor or nparts.
    %o, %in = "sched.split"(%i) : (!sched.axis) -> (!sched.axis, !sched.axis)
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @split_both(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.split' op: sched.split takes exactly one of a factor or nparts.
    %o, %in = "sched.split"(%i) <{factor = #builtin.int<2>, nparts = #builtin.int<4>}> : (!sched.axis) -> (!sched.axis, !sched.axis)
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @split_factor(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.split' op: sched.split factor must be positive, not 0.
    %o, %in = sched.split %i by 0
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @split_nparts(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.split' op: sched.split nparts must be positive, not -2.
    %o, %in = sched.split %i into -2
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @tile_factor_count(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.tile' op: sched.tile takes two factors.
    %io, %jo, %ii, %ji = "sched.tile"(%i, %j) <{factors = [#builtin.int<2>, #builtin.int<2>, #builtin.int<2>]}> : (!sched.axis, !sched.axis) -> (!sched.axis, !sched.axis, !sched.axis, !sched.axis)
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @tile_factor(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.tile' op: sched.tile factor must be positive, not 0.
    %io, %jo, %ii, %ji = sched.tile %i, %j by 4, 0
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @reorder_twice(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    %j = sched.axis %s "j"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.reorder' op: sched.reorder names an axis twice.
    sched.reorder %j, %i, %j
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @fuse_one(%A: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x8xf32> {
    %a = te.read %A[%i, %j] : tensor<8x8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8x8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.fuse' op: sched.fuse takes at least two axes.
    %f = sched.fuse %i
  }
  func.return %C : tensor<8x8xf32>
}

// -----

func.func @cache_read_scope(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sA = sched.stage %A : tensor<8xf32>
    %sC = sched.stage %C : tensor<8xf32>
    // The scope is an enum attribute: another word is a parse error at the word.
    // CHECK: invalid.mlir:[[# @LINE + 2]]:32
    // CHECK: Expected `global`, `local`, `shared`, `inp_buffer`, `wgt_buffer`, or `acc_buffer`.
    %AA = sched.cache_read %sA "texture" for %sC
  }
  func.return %C : tensor<8xf32>
}

// -----

// The custom syntax needs a reader after `for`; the generic form can omit it.
func.func @cache_read_no_reader(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sA = sched.stage %A : tensor<8xf32>
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'sched.cache_read' op: sched.cache_read needs at least one reader stage.
    %AA = "sched.cache_read"(%sA) <{scope = #sched<scope local>}> : (!sched.stage) -> !sched.stage
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @cache_write_scope(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %sC = sched.stage %C : tensor<8xf32>
    // CHECK: invalid.mlir:[[# @LINE + 2]]:33
    // CHECK: Expected `global`, `local`, `shared`, `inp_buffer`, `wgt_buffer`, or `acc_buffer`.
    %CL = sched.cache_write %sC register
  }
  func.return %C : tensor<8xf32>
}

// -----

// A stage is a handle to a tensor, never to a buffer.
func.func @stage_of_memref(%A: memref<8xf32>) {
  sched.schedule {
    // The declarative format checks the operand type while parsing.
    // CHECK: invalid.mlir:[[# @LINE + 2]]:5
    // CHECK: memref<8xf32> should be of base attribute tensor
    %s = sched.stage %A : memref<8xf32>
  }
  func.return
}

// -----

// Syntax errors (--parsing-diagnostics) point at the token.
func.func @axis_name_not_string(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    // CHECK: invalid.mlir:[[# @LINE + 2]]:24
    // CHECK: attribute expected
    %i = sched.axis %s i
  }
  func.return %C : tensor<8xf32>
}

// -----

func.func @split_without_by(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 2]]:30
    // CHECK: Expected 'into'
    %o, %in = sched.split %i 4
  }
  func.return %C : tensor<8xf32>
}

// -----

// An axis handle where a stage is expected.
func.func @axis_for_stage(%A: tensor<8xf32>) -> tensor<8xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    te.yield %a : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    %i = sched.axis %s "i"
    // CHECK: invalid.mlir:[[# @LINE + 2]]:26
    // CHECK: operand is used with type !sched.stage, but has been previously used or defined with type !sched.axis
    sched.compute_inline %i
  }
  func.return %C : tensor<8xf32>
}
