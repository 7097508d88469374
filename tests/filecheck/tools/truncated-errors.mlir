// A file cut short (a truncated copy, a lost closing brace) says that the file
// ends, inside which ops' regions and where each opens, not xDSL's bare
// " in block definition". Each RUN cuts this file at one marker line.

// RUN: sed -e '/^ *\/\/ CUT-IN-BODY$/,$d' %s > %t.body.mlir
// RUN: not tilecraft-opt %t.body.mlir 2>&1 | filecheck %s --check-prefix=BODY
// RUN: not tilecraft-run %t.body.mlir --entry f 2>&1 | filecheck %s --check-prefix=BODY
// RUN: sed -e '/^ *\/\/ CUT-IN-SCHEDULE$/,$d' %s > %t.schedule.mlir
// RUN: not tilecraft-opt %t.schedule.mlir 2>&1 | filecheck %s --check-prefix=SCHEDULE
// RUN: sed -e '/^ *\/\/ CUT-BEFORE-RETURN$/,$d' %s > %t.function.mlir
// RUN: not tilecraft-translate %t.function.mlir 2>&1 | filecheck %s --check-prefix=FUNCTION

// A stray token where an op or the region's '}' belongs.
// RUN: sed -e 's|^ *// STRAY$|    42|' %s > %t.stray.mlir
// RUN: not tilecraft-opt %t.stray.mlir 2>&1 | filecheck %s --check-prefix=STRAY

// BODY-NOT: in block definition
// SCHEDULE-NOT: in block definition
// FUNCTION-NOT: in block definition

// BODY: .body.mlir:[[# @LINE + 5]]:1: error: the file ends inside 'te.compute' (its region opens at [[# @LINE + 3]]:50), inside 'func.func' (its region opens at [[# @LINE + 1]]:50): 2 '}' are missing (is the file truncated?)
func.func @f(%A: tensor<8xf32>) -> tensor<8xf32> {
  // STRAY: .stray.mlir:[[# @LINE + 4]]:5: error: expected an operation or the '}' that closes the region of 'te.compute' (opened at [[# @LINE + 1]]:50), got '42'
  %C = te.compute "C" (%i: "i") -> tensor<8xf32> {
    %a = te.read %A[%i] : tensor<8xf32>
    // CUT-IN-BODY
    // STRAY
    te.yield %a : f32
  }
  // SCHEDULE: .schedule.mlir:[[# @LINE + 3]]:1: error: the file ends inside 'sched.schedule' (its region opens at [[# @LINE + 1]]:18), inside 'func.func'
  sched.schedule {
    %s = sched.stage %C : tensor<8xf32>
    // CUT-IN-SCHEDULE
    %i = sched.axis %s "i"
  }
  // The function's region opens on the first line of the function, above.
  // FUNCTION: .function.mlir:[[# @LINE + 1]]:1: error: the file ends inside 'func.func' (its region opens at [[# @LINE - 15]]:50): a '}' is missing (is the file truncated?)
  // CUT-BEFORE-RETURN
  func.return %C : tensor<8xf32>
}
