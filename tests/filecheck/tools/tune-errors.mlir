// tilecraft-tune: bad inputs give one line on stderr and exit code 1, never a
// Python traceback, and before any tuning starts.

// A model that does not exist, a directory, a file that is neither .onnx nor .mlir.
// RUN: not tilecraft-tune %t.missing.onnx --trials 4 --log %t.jsonl 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: tilecraft-tune: error: cannot read '{{.*}}missing.onnx': no such file
// MISSING-NOT: Traceback
// RUN: not tilecraft-tune %S/Inputs --trials 4 --log %t.jsonl 2>&1 | filecheck %s --check-prefix=DIRECTORY
// DIRECTORY: tilecraft-tune: error: cannot read '{{.*}}Inputs': it is a directory
// RUN: not tilecraft-tune %S/Inputs/make_models.py --trials 4 --log %t.jsonl 2>&1 | filecheck %s --check-prefix=SUFFIX
// SUFFIX: tilecraft-tune: error: '{{.*}}make_models.py' is neither an ONNX model (.onnx) nor an IR file (.mlir)

// A damaged tuning log names its file and line (a record lost in silence could
// make a resumed run measure it again, or hide the best config).
// RUN: printf '{"kind": "done", "workload": "matmul[8,8,8]", "target": "llvm", "time": 1}\nnot json\n' > %t.bad.jsonl
// RUN: not tilecraft-tune %s --trials 4 --log %t.bad.jsonl 2>&1 | filecheck %s --check-prefix=LOG
// LOG: tilecraft-tune: error: {{.*}}bad.jsonl:2: not a JSON record (Expecting value: line 1 column 1 (char 0))
// LOG-NOT: Traceback
// The random search's log (under --plot) is checked too.
// RUN: printf '[1]\n' > %t.plot.random.jsonl
// RUN: not tilecraft-tune %s --trials 4 --log %t.plot.jsonl --plot %t.png 2>&1 | filecheck %s --check-prefix=RANDOMLOG
// RANDOMLOG: tilecraft-tune: error: {{.*}}plot.random.jsonl:1: a record is a JSON object, not list

// A dask scheduler address that does not parse, or where nothing listens.
// RUN: not tilecraft-tune %s --trials 4 --log %t.jsonl --scheduler nowhere 2>&1 | filecheck %s --check-prefix=ADDRESS
// ADDRESS: tilecraft-tune: error: bad --scheduler address 'nowhere': missing port number in address 'nowhere'
// RUN: not tilecraft-tune %s --trials 4 --log %t.jsonl --scheduler tcp://127.0.0.1:1 2>&1 | filecheck %s --check-prefix=REFUSED
// REFUSED: tilecraft-tune: error: no dask scheduler answers at 'tcp://127.0.0.1:1': Connection refused
// REFUSED-NOT: Traceback

// The command line.
// RUN: not tilecraft-tune %s --trials 0 --log %t.jsonl 2>&1 | filecheck %s --check-prefix=TRIALS
// TRIALS: tilecraft-tune: error: --trials must be at least 1, got 0
// RUN: not tilecraft-tune %s --trials 4 --log %t.jsonl --workers 0 2>&1 | filecheck %s --check-prefix=WORKERS
// WORKERS: tilecraft-tune: error: --workers must be at least 1, got 0
// RUN: not tilecraft-tune %s --trials 4 2>&1 | filecheck %s --check-prefix=NOLOG
// NOLOG: tilecraft-tune: error: the following arguments are required: --log
// RUN: not tilecraft-tune %t.missing.onnx --trials 4 --log %t.jsonl --input-shape x=1xa 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: tilecraft-tune: error: bad --input-shape 'x=1xa': write NAME=D1xD2x... (or NAME=D1,D2,...) with positive extents, e.g. x=1x3x224x224
// RUN: not tilecraft-tune %s --trials 4 --log %t.jsonl --input-shape x=1x4 2>&1 | filecheck %s --check-prefix=SHAPE-IR
// SHAPE-IR: tilecraft-tune: error: --input-shape fixes the inputs of an ONNX model; an IR file has static shapes
// RUN: not tilecraft-tune %s --trials 4 --log %t.jsonl --plot %t.png --random 2>&1 | filecheck %s --check-prefix=PLOT-RANDOM
// PLOT-RANDOM: tilecraft-tune: error: --plot runs both searches itself: leave out --random

// (This file stands in for a model in the cases above: they fail before it is read.)
