// tilecraft-opt turns every user error into a short message on stderr and a
// non-zero exit code, never a Python traceback.

// A pass that does not exist.
// RUN: not tilecraft-opt %S/Inputs/good.mlir -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: Traceback
// UNKNOWN: tilecraft-opt: error: bad pass pipeline 'no-such-pass': Unrecognized passes: ['no-such-pass']
// UNKNOWN-NOT: Traceback

// An option the pass does not have.
// RUN: not tilecraft-opt %S/Inputs/good.mlir -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION-NOT: Traceback
// OPTION: tilecraft-opt: error: bad pass pipeline 'canonicalize{no-such-option=1}': Provided arguments ["no_such_option"] not found in expected arguments []
// OPTION-NOT: Traceback

// A pipeline that does not parse.
// RUN: not tilecraft-opt %S/Inputs/good.mlir -p 'canonicalize{' 2>&1 | filecheck %s --check-prefix=SPEC
// SPEC-NOT: Traceback
// SPEC: tilecraft-opt: error: bad pass pipeline 'canonicalize{': Error parsing pass pipeline specification:
// SPEC-NOT: Traceback

// A file that does not exist, and a directory.
// RUN: not tilecraft-opt %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING-NOT: Traceback
// MISSING: tilecraft-opt: error: cannot read '{{.*}}does-not-exist.mlir': no such file
// MISSING-NOT: Traceback
// RUN: not tilecraft-opt %S/Inputs 2>&1 | filecheck %s --check-prefix=DIRECTORY
// DIRECTORY-NOT: Traceback
// DIRECTORY: tilecraft-opt: error: cannot read '{{.*}}Inputs': it is a directory
// DIRECTORY-NOT: Traceback

// A file whose extension names no frontend.
// RUN: echo "builtin.module {}" > %t.ir
// RUN: not tilecraft-opt %t.ir 2>&1 | filecheck %s --check-prefix=EXTENSION
// EXTENSION-NOT: Traceback
// EXTENSION: tilecraft-opt: error: Unrecognized file extension 'ir'; pass -f mlir to read it as IR
// EXTENSION-NOT: Traceback
// RUN: tilecraft-opt %t.ir -f mlir | filecheck %s --check-prefix=FRONTEND
// FRONTEND: builtin.module {

// A syntax error: file:line:col, then the line with the token marked.
// RUN: not tilecraft-opt %S/Inputs/parse-error.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE-NOT: Traceback
// PARSE:      parse-error.mlir:3:17: error: Expected integer literal
// PARSE-NEXT:   loop.for %i = %n to 8 {
// PARSE-NEXT:                 ^^
// PARSE-NOT: Traceback

// A verifier error: file:line:col of the op at fault.
// RUN: not tilecraft-opt %S/Inputs/verify-error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY-NOT: Traceback
// VERIFY: verify-error.mlir:4:5: error: 'te.reduce' op: te.reduce axis 'k' has an empty range [4, 0).
// VERIFY-NOT: Traceback

// Valid input passes through, on stdin as well.
// RUN: tilecraft-opt %S/Inputs/good.mlir | tilecraft-opt | filecheck %s --check-prefix=GOOD
// GOOD: func.func @add(
// GOOD: te.compute "C"
