// RUN: tilecraft-opt %s --split-input-file -p alter-layout | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'alter-layout{kn-dense=false}' | filecheck %s --check-prefix=NK
// RUN: tilecraft-opt %s --split-input-file -p 'alter-layout{block=8}' | filecheck %s --check-prefix=BLOCK8
// RUN: tilecraft-opt %s --split-input-file -p 'alter-layout{max-padding=0}' | filecheck %s --check-prefix=NOPAD
// With a weight store: packed weights are new arrays of the store, named after the old.
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t.npz', **{'conv.weight': r.standard_normal((32, 16, 3, 3)).astype(np.float32), 'conv.bias': np.arange(32, dtype=np.float32), 'fc.weight': np.arange(20, dtype=np.float32).reshape(4, 5)})"
// RUN: sed -e 's|@STORE@|%t.npz|' %S/Inputs/alter-layout-store.mlir | tilecraft-opt -p 'alter-layout{kn-dense=true}' --weights-out %t.out.npz | filecheck %s --check-prefix=STORE
// RUN: python -c "import numpy as np; s = np.load('%t.out.npz'); print(sorted(s.files)); print(s['conv.weight.OIHW16i16o'].shape, s['conv.bias.blocked'][1, 0, 0, :3].tolist(), s['fc.weight.KN'][0].tolist())" | filecheck %s --check-prefix=ARRAYS

// STORE-LABEL: func.func @store
// STORE-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// STORE-NEXT:    %[[W:.*]] = graph.weight "conv.weight.OIHW16i16o" : tensor<2x1x3x3x16x16xf32>
// STORE-NEXT:    %[[C:.*]] = graph.conv2d %[[T]], %[[W]]
// STORE-NEXT:    %[[B:.*]] = graph.weight "conv.bias.blocked" : tensor<2x1x1x16xf32>
// STORE-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]]
// STORE-NEXT:    %[[P:.*]] = graph.layout_transform %[[A]] {src = "NCHW16c", dst = "NCHW"}
// STORE-NEXT:    %[[FW:.*]] = graph.weight "fc.weight.KN" : tensor<5x4xf32>
// STORE-NEXT:    %[[D:.*]] = graph.dense %y, %[[FW]] {weight_layout = #graph<weight_layout KN>} : (tensor<2x5xf32>, tensor<5x4xf32>) -> tensor<2x4xf32>
// STORE-NEXT:    func.return %[[P]], %[[D]]

// The saved store holds the arrays the output names (the old ones stay in the
// store that was read): the packed weight, the bias as [O/16, 1, 1, 16] (block 1
// holds channels 16..31) and the transposed dense weight (its row 0 is column 0 of
// the old).
// ARRAYS: ['conv.bias.blocked', 'conv.weight.OIHW16i16o', 'fc.weight.KN']
// ARRAYS-NEXT: (2, 1, 3, 3, 16, 16) [16.0, 17.0, 18.0] [0.0, 5.0, 10.0, 15.0]

// A conv with 16 input and 32 output channels runs blocked: its input is
// transformed in, its weight packed, its bias split off into an add that fuse-ops
// folds back in as an epilogue. relu follows the blocked value; flatten needs NCHW.
func.func @conv_relu(%x: tensor<1x16x8x8xf32>) -> tensor<1x512xf32> {
  %w = graph.constant dense<1.0> : tensor<32x16x3x3xf32>
  %b = graph.constant dense<0.5> : tensor<32xf32>
  %y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32>
  %r = graph.relu %y : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %f = graph.flatten %r : (tensor<1x32x4x4xf32>) -> tensor<1x512xf32>
  func.return %f : tensor<1x512xf32>
}

// CHECK-LABEL: func.func @conv_relu
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"} : (tensor<1x16x8x8xf32>) -> tensor<1x1x8x8x16xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<2x1x3x3x16x16xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[T]], %[[W]] {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x1x8x8x16xf32>, tensor<2x1x3x3x16x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<5.000000e-01> : tensor<2x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]] : (tensor<1x2x4x4x16xf32>, tensor<2x1x1x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]] : (tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.layout_transform %[[R]] {src = "NCHW16c", dst = "NCHW"} : (tensor<1x2x4x4x16xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    %[[F:.*]] = graph.flatten %[[P]]
// CHECK-NEXT:    func.return %[[F]]

// Blocks of 8: the same rewrite with NCHW8c and OIHW8i8o.
// BLOCK8-LABEL: func.func @conv_relu
// BLOCK8:         graph.conv2d {{.*}} {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, data_layout = "NCHW8c", kernel_layout = "OIHW8i8o", out_layout = "NCHW8c"} : (tensor<1x2x8x8x8xf32>, tensor<4x2x3x3x8x8xf32>) -> tensor<1x4x4x4x8xf32>

// -----

// A residual block: between the two convs, and from the block's input to the
// residual add, every transform back to NCHW cancels against the next transform in.
// What is left is one transform in (the input) and one out (the result).
func.func @residual(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w1 = graph.constant dense<1.0> : tensor<16x16x3x3xf32>
  %w2 = graph.constant dense<2.0> : tensor<16x16x3x3xf32>
  %w3 = graph.constant dense<3.0> : tensor<16x16x1x1xf32>
  %y0 = graph.conv2d %x, %w3 : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %r0 = graph.relu %y0 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %y1 = graph.conv2d %r0, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r1 = graph.relu %y1 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %y2 = graph.conv2d %r1, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %s = graph.add %y2, %r0 : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r2 = graph.relu %s : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  func.return %r2 : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// CHECK-NEXT:    %[[W3:.*]] = graph.constant dense<3.000000e+00> : tensor<1x1x1x1x16x16xf32>
// CHECK-NEXT:    %[[Y0:.*]] = graph.conv2d %[[T]], %[[W3]]
// CHECK-NEXT:    %[[R0:.*]] = graph.relu %[[Y0]] : (tensor<1x1x8x8x16xf32>)
// CHECK-NEXT:    %[[W1:.*]] = graph.constant dense<1.000000e+00> : tensor<1x1x3x3x16x16xf32>
// CHECK-NEXT:    %[[Y1:.*]] = graph.conv2d %[[R0]], %[[W1]]
// CHECK-NEXT:    %[[R1:.*]] = graph.relu %[[Y1]]
// CHECK-NEXT:    %[[W2:.*]] = graph.constant dense<2.000000e+00> : tensor<1x1x3x3x16x16xf32>
// CHECK-NEXT:    %[[Y2:.*]] = graph.conv2d %[[R1]], %[[W2]]
// The residual add of two blocked tensors stays blocked.
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[Y2]], %[[R0]] : (tensor<1x1x8x8x16xf32>, tensor<1x1x8x8x16xf32>) -> tensor<1x1x8x8x16xf32>
// CHECK-NEXT:    %[[R2:.*]] = graph.relu %[[S]]
// CHECK-NEXT:    %[[P:.*]] = graph.layout_transform %[[R2]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[P]]

// -----

// The first conv of an image model: 3 input channels do not make a block, so the
// input stays NCHW (no transform) and the kernel's in-block is all 3 channels.
// Pooling follows the blocked value with a `layout` attribute, global average
// pooling too; flatten reads NCHW again.
func.func @stem(%x: tensor<1x3x16x16xf32>) -> tensor<1x32xf32> {
  %w = graph.constant dense<1.0> : tensor<32x3x7x7xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<32x3x7x7xf32>) -> tensor<1x32x8x8xf32>
  %m = graph.max_pool2d %y {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>) -> tensor<1x32x4x4xf32>
  %a = graph.avg_pool2d %m {kernel = array<i64: 2, 2>} : (tensor<1x32x4x4xf32>) -> tensor<1x32x3x3xf32>
  %g = graph.global_avg_pool2d %a : (tensor<1x32x3x3xf32>) -> tensor<1x32x1x1xf32>
  %f = graph.flatten %g : (tensor<1x32x1x1xf32>) -> tensor<1x32xf32>
  func.return %f : tensor<1x32xf32>
}

// CHECK-LABEL: func.func @stem
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<2x1x7x7x3x16xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]] {pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>, data_layout = "NCHW", kernel_layout = "OIHW3i16o", out_layout = "NCHW16c"} : (tensor<1x3x16x16xf32>, tensor<2x1x7x7x3x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.max_pool2d %[[C]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.avg_pool2d %[[M]] {kernel = array<i64: 2, 2>, layout = "NCHW16c"} : (tensor<1x2x4x4x16xf32>) -> tensor<1x2x3x3x16xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.global_avg_pool2d %[[A]] {layout = "NCHW16c"} : (tensor<1x2x3x3x16xf32>) -> tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.layout_transform %[[G]] {src = "NCHW16c", dst = "NCHW"} : (tensor<1x2x1x1x16xf32>) -> tensor<1x32x1x1xf32>
// CHECK-NEXT:    %[[F:.*]] = graph.flatten %[[P]]
// CHECK-NEXT:    func.return %[[F]]

// -----

// Per-channel constants follow the blocked layout ([C, 1, 1] -> [C/16, 1, 1, 16],
// [1, C, 1, 1] -> [1, C/16, 1, 1, 16]); a scalar stays; a full-shape argument is
// transformed in; an argument that broadcasts otherwise is not, so that op reads
// NCHW and everything after it stays NCHW.
func.func @broadcasts(%x: tensor<1x16x4x4xf32>, %full: tensor<1x32x4x4xf32>, %other: tensor<32x1x1xf32>) -> tensor<1x32x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<32x16x1x1xf32>
  %y = graph.conv2d %x, %w : (tensor<1x16x4x4xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32>
  %s = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]], [[9.0]], [[10.0]], [[11.0]], [[12.0]], [[13.0]], [[14.0]], [[15.0]], [[16.0]], [[17.0]], [[18.0]], [[19.0]], [[20.0]], [[21.0]], [[22.0]], [[23.0]], [[24.0]], [[25.0]], [[26.0]], [[27.0]], [[28.0]], [[29.0]], [[30.0]], [[31.0]], [[32.0]]]> : tensor<32x1x1xf32>
  %m = graph.mul %y, %s : (tensor<1x32x4x4xf32>, tensor<32x1x1xf32>) -> tensor<1x32x4x4xf32>
  %c = graph.constant dense<0.5> : tensor<1x32x1x1xf32>
  %a = graph.sub %c, %m : (tensor<1x32x1x1xf32>, tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %k = graph.constant dense<2.0> : tensor<f32>
  %d = graph.div %a, %k : (tensor<1x32x4x4xf32>, tensor<f32>) -> tensor<1x32x4x4xf32>
  %e = graph.maximum %d, %full : (tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %o = graph.add %e, %other : (tensor<1x32x4x4xf32>, tensor<32x1x1xf32>) -> tensor<1x32x4x4xf32>
  %r = graph.relu %o : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %r : tensor<1x32x4x4xf32>
}

// CHECK-LABEL: func.func @broadcasts
// CHECK:         %[[Y:.*]] = graph.conv2d
// Channel 16 (value 17) is the first lane of block 1.
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[}}{{\[}}[{{\[}}1.000000e+00, {{.*}}]]], {{\[}}[{{\[}}1.700000e+01, {{.*}}]]]]> : tensor<2x1x1x16xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[Y]], %[[S]] : (tensor<1x2x4x4x16xf32>, tensor<2x1x1x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<5.000000e-01> : tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.sub %[[C]], %[[M]] : (tensor<1x2x1x1x16xf32>, tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[K:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = graph.div %[[A]], %[[K]] : (tensor<1x2x4x4x16xf32>, tensor<f32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[FT:.*]] = graph.layout_transform %full {src = "NCHW", dst = "NCHW16c"}
// CHECK-NEXT:    %[[E:.*]] = graph.maximum %[[D]], %[[FT]] : (tensor<1x2x4x4x16xf32>, tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.layout_transform %[[E]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    %[[O:.*]] = graph.add %[[P]], %other : (tensor<1x32x4x4xf32>, tensor<32x1x1xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[O]] : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    func.return %[[R]]

// -----

// By default a dense with a known weight reads it transposed, as KN; one with
// a weight argument cannot be packed ahead of time and stays NK.
func.func @dense(%x: tensor<4x3xf32>, %v: tensor<2x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %y = graph.dense %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %z = graph.dense %x, %v : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y, %z : tensor<4x2xf32>, tensor<4x2xf32>
}

// CHECK-LABEL: func.func @dense
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.dense %x, %[[W]], %[[B]] {weight_layout = #graph<weight_layout KN>} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.dense %x, %v : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[Z]]

// With kn-dense=false dense keeps its NK weight.
// NK-LABEL: func.func @dense
// NK-NOT:     weight_layout
// NK:         func.return

// -----

// 64 output columns or a multiple: the weight is packed into panels of 64
// ([N/64, K, 64], each K x 64 contiguous: a register tile's columns). A GEMV
// (one row of x) whose K is whole 16-lane vectors keeps its NK weight (its dot products
// stream each row of the weight once).
func.func @panels(%x: tensor<2x16xf32>, %g: tensor<1x16xf32>) -> (tensor<2x128xf32>, tensor<1x128xf32>) {
  %w = graph.constant dense<1.0> : tensor<128x16xf32>
  %y = graph.dense %x, %w : (tensor<2x16xf32>, tensor<128x16xf32>) -> tensor<2x128xf32>
  %z = graph.dense %g, %w : (tensor<1x16xf32>, tensor<128x16xf32>) -> tensor<1x128xf32>
  func.return %y, %z : tensor<2x128xf32>, tensor<1x128xf32>
}

// CHECK-LABEL: func.func @panels
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<128x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.constant dense<1.000000e+00> : tensor<2x16x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.dense %x, %[[P]] {weight_layout = #graph<weight_layout NK64n>} : (tensor<2x16xf32>, tensor<2x16x64xf32>) -> tensor<2x128xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.dense %g, %[[W]] : (tensor<1x16xf32>, tensor<128x16xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[Z]]

// -----

// N not whole 16-lane vectors (10), K whole ones (32): the dense keeps NK (dot
// products; a KN register tile would end in a masked vector whose accumulators live
// in memory). With 48 columns (3 whole vectors) it reads KN; with K = 24 (no whole
// vectors to split the dot products into) KN too.
func.func @narrow_dense(%x: tensor<4x32xf32>, %x24: tensor<4x24xf32>) -> (tensor<4x10xf32>, tensor<4x48xf32>, tensor<4x10xf32>) {
  %w10 = graph.constant dense<1.0> : tensor<10x32xf32>
  %w48 = graph.constant dense<1.0> : tensor<48x32xf32>
  %w24 = graph.constant dense<1.0> : tensor<10x24xf32>
  %a = graph.dense %x, %w10 : (tensor<4x32xf32>, tensor<10x32xf32>) -> tensor<4x10xf32>
  %b = graph.dense %x, %w48 : (tensor<4x32xf32>, tensor<48x32xf32>) -> tensor<4x48xf32>
  %c = graph.dense %x24, %w24 : (tensor<4x24xf32>, tensor<10x24xf32>) -> tensor<4x10xf32>
  func.return %a, %b, %c : tensor<4x10xf32>, tensor<4x48xf32>, tensor<4x10xf32>
}

// CHECK-LABEL: func.func @narrow_dense
// CHECK:         %[[A:.*]] = graph.dense %x, %{{.*}} : (tensor<4x32xf32>, tensor<10x32xf32>) -> tensor<4x10xf32>
// CHECK:         %[[B:.*]] = graph.dense %x, %{{.*}} {weight_layout = #graph<weight_layout KN>} : (tensor<4x32xf32>, tensor<32x48xf32>) -> tensor<4x48xf32>
// CHECK:         %[[C:.*]] = graph.dense %x24, %{{.*}} {weight_layout = #graph<weight_layout KN>} : (tensor<4x24xf32>, tensor<24x10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]]

// -----

// Convs left alone: 18 input channels (a multiple of neither 16, 8 nor 4, and not
// fewer than 16), a weight that is an argument (cannot be packed ahead of time),
// a grouped 3x3 conv whose groups (2 input, 4 output
// channels) cut even blocks of 4 (a 1x1 one runs on a row of pixels: see
// @grouped_pointwise), a float64 conv, 6 output channels (no block of 16, 8 or 4).
func.func @left_alone(%x: tensor<1x16x4x4xf32>, %x18: tensor<1x18x4x4xf32>, %v: tensor<16x16x1x1xf32>, %x64: tensor<1x16x4x4xf64>) -> (tensor<1x6x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x32x4x4xf32>, tensor<1x16x4x4xf64>) {
  %w6 = graph.constant dense<1.0> : tensor<6x16x1x1xf32>
  %a = graph.conv2d %x, %w6 : (tensor<1x16x4x4xf32>, tensor<6x16x1x1xf32>) -> tensor<1x6x4x4xf32>
  %w18 = graph.constant dense<1.0> : tensor<16x18x1x1xf32>
  %b = graph.conv2d %x18, %w18 : (tensor<1x18x4x4xf32>, tensor<16x18x1x1xf32>) -> tensor<1x16x4x4xf32>
  %c = graph.conv2d %x, %v : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  %wg = graph.constant dense<1.0> : tensor<32x2x3x3xf32>
  %d = graph.conv2d %x, %wg {groups = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<32x2x3x3xf32>) -> tensor<1x32x4x4xf32>
  %w64 = graph.constant dense<1.0> : tensor<16x16x1x1xf64>
  %e = graph.conv2d %x64, %w64 : (tensor<1x16x4x4xf64>, tensor<16x16x1x1xf64>) -> tensor<1x16x4x4xf64>
  func.return %a, %b, %c, %d, %e : tensor<1x6x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x32x4x4xf32>, tensor<1x16x4x4xf64>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     graph.layout_transform
// CHECK-NOT:     _layout
// CHECK:         func.return

// -----

// Channel counts that 8 divides and 16 does not (MobileNet-v2's 24, a 1000-class
// conv's 1000) take blocks of 8: the 16 -> 24 conv writes NCHW8c, the depthwise
// conv and the 24 -> 40 conv read it as it is, and only the result goes back.
func.func @half_blocks(%x: tensor<1x16x8x8xf32>) -> tensor<1x40x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<24x16x1x1xf32>
  %a = graph.conv2d %x, %w : (tensor<1x16x8x8xf32>, tensor<24x16x1x1xf32>) -> tensor<1x24x8x8xf32>
  %wd = graph.constant dense<0.5> : tensor<24x1x3x3xf32>
  %d = graph.conv2d %a, %wd {groups = 24 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x24x8x8xf32>, tensor<24x1x3x3xf32>) -> tensor<1x24x8x8xf32>
  %w2 = graph.constant dense<1.0> : tensor<40x24x1x1xf32>
  %b = graph.conv2d %d, %w2 : (tensor<1x24x8x8xf32>, tensor<40x24x1x1xf32>) -> tensor<1x40x8x8xf32>
  func.return %b : tensor<1x40x8x8xf32>
}

// CHECK-LABEL: func.func @half_blocks
// CHECK:         %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// CHECK:         %[[A:.*]] = graph.conv2d %[[T]], %{{.*}} {data_layout = "NCHW16c", kernel_layout = "OIHW16i8o", out_layout = "NCHW8c"}
// CHECK-NOT:     graph.layout_transform
// CHECK:         %[[D:.*]] = graph.conv2d %[[A]], %{{.*}} {{{.*}}data_layout = "NCHW8c", kernel_layout = "OIHW1i8o", out_layout = "NCHW8c"
// CHECK-NOT:     graph.layout_transform
// CHECK:         %[[B:.*]] = graph.conv2d %[[D]], %{{.*}} {data_layout = "NCHW8c", kernel_layout = "OIHW8i8o", out_layout = "NCHW8c"}
// CHECK:         graph.layout_transform %[[B]] {src = "NCHW8c", dst = "NCHW"}
// CHECK-NEXT:    func.return

// -----

// A depthwise conv (MobileNet's: groups = channels) runs blocked with one input
// channel per output lane (OIHW1i16o), so its blocked input and output chain with
// the convs around it and no transform sits between them.
func.func @depthwise(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<32x32x1x1xf32>
  %p = graph.conv2d %x, %w : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %wd = graph.constant dense<0.5> : tensor<32x1x3x3xf32>
  %d = graph.conv2d %p, %wd {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x4x4xf32>
  %r = graph.clip %d {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  func.return %r : tensor<1x32x4x4xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// CHECK:         %[[P:.*]] = graph.conv2d %[[T]], %{{.*}} {data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"}
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<5.000000e-01> : tensor<2x1x3x3x1x16xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.conv2d %[[P]], %[[W]] {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW1i16o", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<2x1x3x3x1x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.clip %[[D]]
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[R]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[O]]

// -----

// Groups of whole blocks (2 groups of 16 input and 32 output channels) run blocked;
// groups of 2 channels (the @left_alone case above) would cut even 4-lane blocks.
func.func @grouped(%x: tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<64x16x3x3xf32>
  %y = graph.conv2d %x, %w {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x8x8xf32>
  func.return %y : tensor<1x64x8x8xf32>
}

// CHECK-LABEL: func.func @grouped
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<4x1x3x3x16x16xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %[[T]], %[[W]] {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<4x1x3x3x16x16xf32>) -> tensor<1x4x8x8x16xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[Y]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[O]]

// -----

// Groups of 8 input and 8 output channels cut blocks of 16: the conv runs in
// blocks of 8 (the largest that every group holds whole), data and output alike;
// a straddling kernel would compute every 16-lane block twice (2 rows per block).
func.func @grouped_half_blocks(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<32x8x3x3xf32>
  %y = graph.conv2d %x, %w {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x8x8xf32>
  func.return %y : tensor<1x32x8x8xf32>
}

// CHECK-LABEL: func.func @grouped_half_blocks
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW8c"}
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<4x1x3x3x8x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %[[T]], %[[W]] {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW8c", kernel_layout = "OIHW8i8o", out_layout = "NCHW8c"} : (tensor<1x4x8x8x8xf32>, tensor<4x1x3x3x8x8xf32>) -> tensor<1x4x8x8x8xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[Y]] {src = "NCHW8c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[O]]

// -----

// A 1x1 conv whose groups cut even blocks of 4 (ShuffleNet v1's 4 groups of 34
// channels; here 2 input and 6 output channels per group) stays NCHW, on its
// 14 x 14 pixels as one row of 196: the unblocked kernel vectorizes that row with
// 4 lanes where 14 columns took 2. The bias stays with the conv.
func.func @grouped_pointwise(%x: tensor<1x8x14x14xf32>, %b: tensor<24xf32>) -> tensor<1x24x14x14xf32> {
  %w = graph.constant dense<1.0> : tensor<24x2x1x1xf32>
  %y = graph.conv2d %x, %w, %b {groups = 4 : i64} : (tensor<1x8x14x14xf32>, tensor<24x2x1x1xf32>, tensor<24xf32>) -> tensor<1x24x14x14xf32>
  func.return %y : tensor<1x24x14x14xf32>
}

// CHECK-LABEL: func.func @grouped_pointwise
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<24x2x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %x {shape = array<i64: 1, 8, 1, 196>} : (tensor<1x8x14x14xf32>) -> tensor<1x8x1x196xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %[[R]], %[[W]], %b {groups = 4 : i64} : (tensor<1x8x1x196xf32>, tensor<24x2x1x1xf32>, tensor<24xf32>) -> tensor<1x24x1x196xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.reshape %[[Y]] {shape = array<i64: 1, 24, 14, 14>} : (tensor<1x24x1x196xf32>) -> tensor<1x24x14x14xf32>
// CHECK-NEXT:    func.return %[[O]]

// -----

// Grouped convs that cut blocks and stay as they are: a 1x1 conv with stride 2
// (the pixels it reads are no row), one with pads, and one whose row gains no
// wider vector (7 x 9 = 63 pixels: scalar columns either way).
func.func @grouped_pointwise_left_alone(%x: tensor<1x8x14x14xf32>, %x63: tensor<1x8x7x9xf32>) -> (tensor<1x24x7x7xf32>, tensor<1x24x16x16xf32>, tensor<1x24x7x9xf32>) {
  %w = graph.constant dense<1.0> : tensor<24x2x1x1xf32>
  %a = graph.conv2d %x, %w {groups = 4 : i64, strides = array<i64: 2, 2>} : (tensor<1x8x14x14xf32>, tensor<24x2x1x1xf32>) -> tensor<1x24x7x7xf32>
  %b = graph.conv2d %x, %w {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x14x14xf32>, tensor<24x2x1x1xf32>) -> tensor<1x24x16x16xf32>
  %c = graph.conv2d %x63, %w {groups = 4 : i64} : (tensor<1x8x7x9xf32>, tensor<24x2x1x1xf32>) -> tensor<1x24x7x9xf32>
  func.return %a, %b, %c : tensor<1x24x7x7xf32>, tensor<1x24x16x16xf32>, tensor<1x24x7x9xf32>
}

// CHECK-LABEL: func.func @grouped_pointwise_left_alone
// CHECK-NOT:     graph.reshape
// CHECK-NOT:     _layout
// CHECK:         func.return

// -----

// A channel concat of blocked values (DenseNet's) runs on the blocks, with a
// plain operand transformed in: the conv after it reads it as it is.
func.func @concat(%x: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<16x16x1x1xf32>
  %a = graph.conv2d %x, %w : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %c = graph.concat %x, %a {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32>
  %w2 = graph.constant dense<1.0> : tensor<32x32x1x1xf32>
  %b = graph.conv2d %c, %w2 : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  func.return %b : tensor<1x32x8x8xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK:         %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"}
// CHECK:         %[[A:.*]] = graph.conv2d %[[T]]
// CHECK-NEXT:    %[[C:.*]] = graph.concat %[[T]], %[[A]] {axis = 1 : i64} : (tensor<1x1x8x8x16xf32>, tensor<1x1x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NOT:     graph.layout_transform
// CHECK:         %[[B:.*]] = graph.conv2d %[[C]]
// CHECK-NEXT:    graph.layout_transform %[[B]] {src = "NCHW16c", dst = "NCHW"}

// -----

// Channel concats left NCHW: operands of different blocks, and an operand of 20
// channels that blocks of 16 would cut.
func.func @concat_left_alone(%x: tensor<1x16x8x8xf32>, %y: tensor<1x20x8x8xf32>) -> (tensor<1x40x8x8xf32>, tensor<1x36x8x8xf32>) {
  %w = graph.constant dense<1.0> : tensor<16x16x1x1xf32>
  %a = graph.conv2d %x, %w : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %w8 = graph.constant dense<1.0> : tensor<24x16x1x1xf32>
  %e = graph.conv2d %x, %w8 : (tensor<1x16x8x8xf32>, tensor<24x16x1x1xf32>) -> tensor<1x24x8x8xf32>
  %c = graph.concat %a, %e {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x24x8x8xf32>) -> tensor<1x40x8x8xf32>
  %d = graph.concat %a, %y {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x36x8x8xf32>
  func.return %c, %d : tensor<1x40x8x8xf32>, tensor<1x36x8x8xf32>
}

// CHECK-LABEL: func.func @concat_left_alone
// CHECK:         graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x24x8x8xf32>) -> tensor<1x40x8x8xf32>
// CHECK:         graph.concat %{{.*}}, %y {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x20x8x8xf32>) -> tensor<1x36x8x8xf32>

// -----

// Transforms already in the graph: one there and back cancels, two in a row
// between different blocks compose into one.
func.func @compose(%x: tensor<1x32x4x4xf32>) -> (tensor<1x32x4x4xf32>, tensor<1x4x4x4x8xf32>) {
  %a = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"} : (tensor<1x32x4x4xf32>) -> tensor<1x2x4x4x16xf32>
  %b = graph.layout_transform %a {src = "NCHW16c", dst = "NCHW"} : (tensor<1x2x4x4x16xf32>) -> tensor<1x32x4x4xf32>
  %c = graph.layout_transform %a {src = "NCHW16c", dst = "NCHW8c"} : (tensor<1x2x4x4x16xf32>) -> tensor<1x4x4x4x8xf32>
  func.return %b, %c : tensor<1x32x4x4xf32>, tensor<1x4x4x4x8xf32>
}

// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %[[C:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW8c"} : (tensor<1x32x4x4xf32>) -> tensor<1x4x4x4x8xf32>
// CHECK-NEXT:    func.return %x, %[[C]]

// -----

// 30 channels (no block of 16, 8 or 4 divides them) padded with 2 zero channels
// to 2 blocks of 16: the input padded and transformed in, the weights and the bias
// zero on the padded channels (the last 2 of block 1), the depthwise conv on 32
// groups; relu keeps the zeros and stays blocked. Users of NCHW values read the
// first 30 channels of the transform back; sigmoid (0 -> 0.5) is one.
func.func @padded(%x: tensor<1x30x4x4xf32>) -> (tensor<1x30x4x4xf32>, tensor<1x30x2x2xf32>) {
  %w = graph.constant dense<1.0> : tensor<30x30x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<30xf32>
  %y = graph.conv2d %x, %w, %b : (tensor<1x30x4x4xf32>, tensor<30x30x1x1xf32>, tensor<30xf32>) -> tensor<1x30x4x4xf32>
  %r = graph.relu %y : (tensor<1x30x4x4xf32>) -> tensor<1x30x4x4xf32>
  %dw = graph.constant dense<2.0> : tensor<30x1x3x3xf32>
  %d = graph.conv2d %r, %dw {groups = 30 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x30x4x4xf32>, tensor<30x1x3x3xf32>) -> tensor<1x30x2x2xf32>
  %s = graph.sigmoid %d : (tensor<1x30x2x2xf32>) -> tensor<1x30x2x2xf32>
  func.return %r, %s : tensor<1x30x4x4xf32>, tensor<1x30x2x2xf32>
}

// CHECK-LABEL: func.func @padded
// CHECK-NEXT:    %[[P:.*]] = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 2, 0, 0>} : (tensor<1x30x4x4xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %[[P]] {src = "NCHW", dst = "NCHW16c"} : (tensor<1x32x4x4xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<"0x{{(0000803F)+}}{{[0-9A-F]*}}00000000"> : tensor<2x2x1x1x16x16xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[T]], %[[W]] {data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x4x4x16xf32>, tensor<2x2x1x1x16x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{.*}}5.000000e-01, 0.000000e+00, 0.000000e+00]]]]> : tensor<2x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]] : (tensor<1x2x4x4x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[RB:.*]] = graph.layout_transform %[[R]] {src = "NCHW16c", dst = "NCHW"} : (tensor<1x2x4x4x16xf32>) -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    %[[RC:.*]] = graph.slice %[[RB]] {starts = array<i64: 0>, ends = array<i64: 30>, axes = array<i64: 1>} : (tensor<1x32x4x4xf32>) -> tensor<1x30x4x4xf32>
// CHECK-NEXT:    %[[DW:.*]] = graph.constant dense<"0x{{.*}}00000000"> : tensor<2x1x3x3x1x16xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.conv2d %[[R]], %[[DW]] {groups = 32 : i64, {{.*}}kernel_layout = "OIHW1i16o"{{.*}} -> tensor<1x2x2x2x16xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.layout_transform %[[D]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    %[[DC:.*]] = graph.slice %[[DB]] {starts = array<i64: 0>, ends = array<i64: 30>, axes = array<i64: 1>} : (tensor<1x32x2x2xf32>) -> tensor<1x30x2x2xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.sigmoid %[[DC]] : (tensor<1x30x2x2xf32>) -> tensor<1x30x2x2xf32>
// CHECK-NEXT:    func.return %[[RC]], %[[S]]

// Without padding, no block fits 30 channels: the convs stay NCHW.
// NOPAD-LABEL: func.func @padded
// NOPAD-NOT:     graph.layout_transform
// NOPAD:         func.return

// -----

// Groups that cut 16-lane blocks (ShuffleNet v1's 68 channels per group in 272):
// 16-lane blocks in and out with the straddling kernel, its weight [20 rows, 17
// steps of 4 channels, 1, 1, 4, 16]; the bias an add of its blocks.
func.func @grouped_straddle(%x: tensor<1x272x4x4xf32>) -> tensor<1x272x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<272x68x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<272xf32>
  %y = graph.conv2d %x, %w, %b {groups = 4 : i64} : (tensor<1x272x4x4xf32>, tensor<272x68x1x1xf32>, tensor<272xf32>) -> tensor<1x272x4x4xf32>
  func.return %y : tensor<1x272x4x4xf32>
}

// CHECK-LABEL: func.func @grouped_straddle
// CHECK:         %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW16c"} : (tensor<1x272x4x4xf32>) -> tensor<1x17x4x4x16xf32>
// CHECK:         %[[C:.*]] = graph.conv2d %[[T]], %{{.*}} {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<5.000000e-01> : tensor<17x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[A]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[O]]

// -----

// Groups that cut even 4-lane blocks (34 channels per group in 136, the rows read
// 2 channels a step) straddle too, with the channels padded to 9 whole blocks: the
// input through a zero pad, the bias padded with zeros, the result cropped after
// the relu that keeps the padded lanes zero.
func.func @grouped_straddle_padded(%x: tensor<1x136x4x4xf32>) -> tensor<1x136x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<136x34x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<136xf32>
  %y = graph.conv2d %x, %w, %b {groups = 4 : i64} : (tensor<1x136x4x4xf32>, tensor<136x34x1x1xf32>, tensor<136xf32>) -> tensor<1x136x4x4xf32>
  %r = graph.relu %y : (tensor<1x136x4x4xf32>) -> tensor<1x136x4x4xf32>
  func.return %r : tensor<1x136x4x4xf32>
}

// CHECK-LABEL: func.func @grouped_straddle_padded
// CHECK-NEXT:    %[[P:.*]] = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 8, 0, 0>} : (tensor<1x136x4x4xf32>) -> tensor<1x144x4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %[[P]] {src = "NCHW", dst = "NCHW16c"} : (tensor<1x144x4x4xf32>) -> tensor<1x9x4x4x16xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[T]], %[[W]] {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle136c136o2i16o", out_layout = "NCHW16c"} : (tensor<1x9x4x4x16xf32>, tensor<12x17x1x1x2x16xf32>) -> tensor<1x9x4x4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant {{.*}} : tensor<9x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]]
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[R]] {src = "NCHW16c", dst = "NCHW"} : (tensor<1x9x4x4x16xf32>) -> tensor<1x144x4x4xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.slice %[[O]] {starts = array<i64: 0>, ends = array<i64: 136>, axes = array<i64: 1>}
// CHECK-NEXT:    func.return %[[S]]

// -----

// Input channels that neither fill nor pad to 16-lane blocks (24: ShuffleNet v1's
// first grouped conv, 6 in and 28 out per group) come in the block they take
// (8 lanes: the rows read 2 channels a step); the output is in 16-lane blocks.
func.func @grouped_straddle_narrow_input(%x: tensor<1x24x8x8xf32>) -> tensor<1x112x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<112x6x1x1xf32>
  %y = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x24x8x8xf32>, tensor<112x6x1x1xf32>) -> tensor<1x112x8x8xf32>
  func.return %y : tensor<1x112x8x8xf32>
}

// CHECK-LABEL: func.func @grouped_straddle_narrow_input
// CHECK-NEXT:    %[[T:.*]] = graph.layout_transform %x {src = "NCHW", dst = "NCHW8c"} : (tensor<1x24x8x8xf32>) -> tensor<1x3x8x8x8xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[T]], %[[W]] {groups = 4 : i64, data_layout = "NCHW8c", kernel_layout = "straddle24c112o2i16o", out_layout = "NCHW16c"} : (tensor<1x3x8x8x8xf32>, tensor<10x3x1x1x2x16xf32>) -> tensor<1x7x8x8x16xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.layout_transform %[[C]] {src = "NCHW16c", dst = "NCHW"}
// CHECK-NEXT:    func.return %[[O]]

// -----

// Where the straddling kernel would do many zero multiply-adds (12 channels per
// group of 48: 6 rows for 3 blocks, 2x the useful ones) the groups keep 4-lane blocks.
func.func @grouped_straddle_wasteful(%x: tensor<1x48x4x4xf32>) -> tensor<1x48x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<48x12x1x1xf32>
  %y = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x48x4x4xf32>, tensor<48x12x1x1xf32>) -> tensor<1x48x4x4xf32>
  func.return %y : tensor<1x48x4x4xf32>
}

// CHECK-LABEL: func.func @grouped_straddle_wasteful
// CHECK:         graph.conv2d {{.*}} {groups = 4 : i64, data_layout = "NCHW4c", kernel_layout = "OIHW4i4o", out_layout = "NCHW4c"}
// CHECK-NOT:     straddle
// CHECK:         func.return
