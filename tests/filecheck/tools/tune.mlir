// tilecraft-tune: a model's tasks tuned into a log, one line per task, a summary;
// a second run resumes from the log and measures nothing again.

// RUN: rm -rf %t && python %S/Inputs/make_models.py %t
// RUN: tilecraft-tune %t/mlp.onnx --trials 2 --random --log %t/tune.jsonl 2>%t/bars.txt | filecheck %s
// The softmax is a task too (template "reduce").
// CHECK: 3 tunable task(s) in {{.*}}mlp.onnx; 2 trials each, random search, log {{.*}}tune.jsonl
// CHECK-NEXT: [1/3] dense{{\[}}[2,8],[8,16],"KN","float32"]: 2 trials (0 errors) in {{[0-9.]+}} s; best {{[0-9.]+}} GFLOP/s vs default {{[0-9.]+}} ({{[0-9.]+}}x)
// fc2's 4 output columns are not a whole vector: it keeps its NK weight.
// CHECK-NEXT: [2/3] dense{{\[}}[2,16],[4,16],"NK","float32"]: 2 trials (0 errors) in {{[0-9.]+}} s; best
// CHECK-NEXT: [3/3] reduce{{\[}}"softmax",[2,4],[1],1,"float32"]: 2 trials (0 errors) in {{[0-9.]+}} s; best
// CHECK-NEXT: tuned 3 task(s): 6 new measurements in {{[0-9.]+}} s; tuned kernels {{[0-9.]+}} ms -> {{[0-9.]+}} ms per run

// The progress bars (stderr): best GFLOP/s so far, trials, errors.
// RUN: filecheck %s --check-prefix=BAR --input-file %t/bars.txt
// BAR: [1/3] dense: 100%{{.*}} 2/2 {{.*}}best {{[0-9.]+}} GFLOP/s, 0 errors

// RUN: tilecraft-tune %t/mlp.onnx --trials 2 --log %t/tune.jsonl 2>/dev/null | filecheck %s --check-prefix=RESUME
// RESUME: [1/3] dense{{.*}}: 2 trials (0 errors, 2 from the log) in {{[0-9.]+}} s
// RESUME: tuned 3 task(s): 0 new measurements

// A model without a tunable kernel (after its dynamic input is fixed).
// RUN: not tilecraft-tune %t/dynamic.onnx --input-shape x=2x4 --trials 2 --log %t/tune.jsonl 2>&1 | filecheck %s --check-prefix=NOTHING
// NOTHING: tilecraft-tune: error: nothing to tune in '{{.*}}dynamic.onnx': it has no tunable kernel (conv2d, dense, matmul, ...)
// NOTHING-NOT: Traceback
// RUN: not tilecraft-tune %t/dynamic.onnx --trials 2 --log %t/tune.jsonl 2>&1 | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: tilecraft-tune: error: input #1 of the model has sizes known only when it runs (batch); tuning measures kernels at given sizes: fix them with input_shapes= (the tools' --input-shape NAME=D1xD2x...)
