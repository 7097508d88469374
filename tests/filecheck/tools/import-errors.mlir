// tilecraft-import errors: one line on stderr, exit code 1, no traceback.
// RUN: rm -rf %t && python %S/Inputs/make_models.py %t
// RUN: not tilecraft-import %t/nms.onnx -o %t/nms.mlir 2>&1 | filecheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: tilecraft-import: error: unsupported ONNX operator 'NonMaxSuppression' (node 'nms_1')
// UNKNOWN-OP-NOT: Traceback

// An op that does not take sizes known only when the model runs (here Squeeze on a
// `batch` input) says how to compile the model for one shape.
// RUN: not tilecraft-import %t/dynamic_squeeze.onnx -o %t/dynamic_squeeze.mlir 2>&1 | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: tilecraft-import: error: ONNX operator 'Squeeze' (node 'squeeze'): graph.squeeze does not take symbolic sizes (yet): operand 0 is batch at dimension 0 (while building graph.squeeze); to compile the model for one shape, give input_shapes={'x': (1, 1, 8)} (the tools' --input-shape x=1x1x8)

// RUN: not tilecraft-import %t/dynamic.onnx --input-shape x=3,a 2>&1 | filecheck %s --check-prefix=BADSHAPE
// BADSHAPE: tilecraft-import: error: bad --input-shape 'x=3,a': write NAME=D1xD2x... (or NAME=D1,D2,...) with positive extents, e.g. x=1x3x224x224

// RUN: not tilecraft-import %t/dynamic.onnx --input-shape x=3,4,5 2>&1 | filecheck %s --check-prefix=MISFIT
// MISFIT: tilecraft-import: error: the shape (3, 4, 5) given for input 'x' does not fit its declared shape (batch, 4)

// An opset before 13 is converted with onnx.version_converter.
// RUN: tilecraft-import %t/opset11.onnx 2>&1 | filecheck %s --check-prefix=OPSET
// OPSET: graph.relu

// RUN: not tilecraft-import %t/missing.onnx 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: tilecraft-import: error: cannot read '{{.*}}missing.onnx': no such file

// RUN: not tilecraft-import %t/mlp.onnx 2>&1 | filecheck %s --check-prefix=NOOUT
// NOOUT: tilecraft-import: error: the model has weights: pass -o MODEL.mlir (or --weights PATH.npz) to save them
