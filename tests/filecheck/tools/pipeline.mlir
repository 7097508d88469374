// A model lowered as text, end to end: tilecraft-import, tilecraft-opt -p compile-model
// (what tc.compile runs) from graph IR to loop IR (the graph function becomes a loop function
// that calls the kernels, its weights named arguments), tilecraft-run on it (and on
// the graph IR), and tilecraft-translate to LLVM IR. Its outputs equal the
// compiled model's.
// RUN: rm -rf %t && python %S/Inputs/make_models.py %t
// RUN: tilecraft-import %t/mlp.onnx -o %t/mlp.mlir
// RUN: tilecraft-opt %t/mlp.mlir -p compile-model --weights-out %t/folded.npz -o %t/mlp.loop.mlir
// RUN: filecheck %s --input-file %t/mlp.loop.mlir
// RUN: python -c "import numpy as np; np.save('%t/x.npy', np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8))"
// RUN: tilecraft-run %t/mlp.loop.mlir --entry main --input %t/x.npy --output %t/logits.npy --output %t/probs.npy
// RUN: tilecraft-run %t/mlp.onnx --input x=%t/x.npy --output %t/logits.ref.npy --output %t/probs.ref.npy
// The graph IR itself runs too (compiled whole, like the .onnx file).
// RUN: tilecraft-run %t/mlp.mlir --entry main --input x=%t/x.npy --output %t/logits.graph.npy --output %t/probs.graph.npy
// RUN: python -c "import numpy as np; [np.testing.assert_allclose(np.load('%t/' + n + s + '.npy'), np.load('%t/' + n + '.ref.npy'), rtol=1e-5, atol=1e-6) for n in ('logits', 'probs') for s in ('', '.graph')]; print('same outputs')" | filecheck %s --check-prefix=SAME
// RUN: tilecraft-translate %t/mlp.loop.mlir | filecheck %s --check-prefix=LLVM
// The weights come from the store the module names; without it, one clear error.
// RUN: sed -e 's|folded.npz|missing.npz|' %t/mlp.loop.mlir > %t/missing.mlir
// RUN: not tilecraft-run %t/missing.mlir --entry main 2>&1 | filecheck %s --check-prefix=NOSTORE

// fc1 (K = 8) reads its weight KN; fc2's 4 output columns are not a whole vector,
// so it keeps NK (dot products over its K = 16).
// CHECK:      builtin.module attributes {graph.weights = "{{.*}}folded.npz"} {
// CHECK-NEXT:   func.func @main(%x: memref<2x8xf32> {tc.name = "x"},
// CHECK-SAME:     %fc1_weight_KN: memref<8x16xf32> {tc.weight = "fc1.weight.KN"},
// CHECK-SAME:     %fc2_weight_T: memref<4x16xf32> {tc.weight = "fc2.weight.T"},
// CHECK-SAME:     %logits: memref<2x4xf32> {tc.name = "logits"},
// CHECK-SAME:     %probs: memref<2x4xf32> {tc.name = "probs"})
// CHECK-NEXT:     %arena = loop.alloc "arena" global : memref<{{[0-9]+}}xi8>
// CHECK-NEXT:     %[[H:.*]] = loop.view %arena[0]
// CHECK-NEXT:     func.call @fused_dense_relu(%x, %fc1_weight_KN, %[[H]])
// CHECK-NEXT:     func.call @fused_dense_add(%[[H]], %fc2_weight_T, %logits)
// CHECK-NEXT:     func.call @fused_softmax(%logits, %probs)
// CHECK-NEXT:     func.return
// CHECK:        func.func @fused_dense_relu(

// SAME: same outputs

// LLVM: define void @main(
// LLVM: define void @fused_dense_relu(

// NOSTORE: tilecraft-run: error: cannot read weight store '{{.*}}missing.npz'
// NOSTORE-NOT: Traceback
