// tilecraft-analyze --dynamic: the model run once with a counter in every block;
// its counts per kernel, checked block by block against loop-counts.

// RUN: tilecraft-analyze %s --dynamic | filecheck %s
// CHECK:      name {{ +}}op {{ +}}calls {{ +}}iterations {{ +}}macs {{ +}}flops {{ +}}bytes_read {{ +}}bytes_written {{ +}}guards {{ +}}guards_taken
// CHECK:      fused_conv2d_relu {{ +}}func.func {{ +}}1 {{ +}}{{[0-9,]+}} {{ +}}21,600 {{ +}}
// CHECK:      fused_max_pool2d {{ +}}func.func {{ +}}1 {{ +}}{{[0-9,]+}} {{ +}}0 {{ +}}800 {{ +}}
// CHECK:      dynamic counts (random inputs): equal to the static loop-counts in all {{[0-9]+}} blocks

// The same statically, at loop level: 8 x 3 x 3 x 3 x 10 x 10 multiply-adds, as
// the graph level counts them.
// RUN: tilecraft-analyze %s --level loop | filecheck %s --check-prefix=STATIC
// STATIC: fused_conv2d_relu {{ +}}func.func {{ +}}1 {{ +}}{{[0-9,]+}} {{ +}}21,600 {{ +}}
// RUN: tilecraft-analyze %s --analysis macs | filecheck %s --check-prefix=GRAPH
// GRAPH: y {{ +}}graph.conv2d {{ +}}21,600

// The memory plan: the arena plan-memory chose against a buffer per value, and
// the scratch each kernel allocates.
// RUN: tilecraft-analyze %s --level loop --analysis memory-plan | filecheck %s --check-prefix=MEMORY
// MEMORY:      name {{ +}}op {{ +}}arena_bytes {{ +}}naive_bytes {{ +}}global_scratch_bytes {{ +}}local_scratch_bytes
// MEMORY-NEXT: main {{ +}}func.func {{ +}}3,200 {{ +}}3,200 {{ +}}3,200
// MEMORY-NEXT: fused_conv2d_relu {{ +}}func.func {{ +}}1,728 {{ +}}64

// --profile adds each kernel's measured time (and draws them on the roofline).
// RUN: tilecraft-analyze %s --level loop --profile --roofline %t.png | filecheck %s --check-prefix=PROFILE
// PROFILE: name {{.*}} predicted_s {{ +}}measured_s
// PROFILE: fused_conv2d_relu {{ +}}func.func {{.*}}e-0{{[0-9]}} {{ +}}{{[0-9.]+}}e-0
// RUN: not tilecraft-analyze %s --profile 2>&1 | filecheck %s --check-prefix=PROFILE-GRAPH
// PROFILE-GRAPH: tilecraft-analyze: error: --profile measures kernels: use it with --level loop

// A model that does not compile: one line, exit 1.
// RUN: not tilecraft-analyze %S/Inputs/loops.mlir --dynamic 2>&1 | filecheck %s --check-prefix=BAD
// BAD: loops.mlir:{{[0-9]+}}:{{[0-9]+}}: error: check-graph-level: @{{.*}} is loop-level IR

func.func @main(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x5x5xf32> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32>
  %r = graph.relu %y : (tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %p = graph.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x10x10xf32>) -> tensor<1x8x5x5xf32>
  func.return %p : tensor<1x8x5x5xf32>
}
