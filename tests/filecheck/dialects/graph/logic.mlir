// Comparisons, bitwise logic (logical on i1) and integer mod, in the new element
// types too: printed, parsed again, printed identically; generic form likewise.
// RUN: %roundtrip
// RUN: %generic-roundtrip
// RUN: tilecraft-opt %s -p convert-graph-to-te | filecheck %s --check-prefix=TE

func.func @logic(%a: tensor<2x4xi8>, %b: tensor<4xi8>, %h: tensor<4xf16>, %m: tensor<2x4xi1>) -> tensor<2x4xi8> {
  %0 = graph.less_equal %a, %b : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi1>
  %1 = graph.greater_equal %h, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  %2 = graph.not_equal %h, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  %3 = graph.bitwise_and %0, %m : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  %4 = graph.bitwise_or %3, %2 : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  %5 = graph.bitwise_xor %a, %b : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi8>
  %6 = graph.bitwise_not %4 : (tensor<2x4xi1>) -> tensor<2x4xi1>
  %7 = graph.mod %5, %b : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi8>
  func.return %7 : tensor<2x4xi8>
}

// CHECK-LABEL: func.func @logic(
// CHECK-SAME:      %[[A:.*]]: tensor<2x4xi8>, %[[B:.*]]: tensor<4xi8>, %[[H:.*]]: tensor<4xf16>, %[[M:.*]]: tensor<2x4xi1>)
// CHECK-NEXT:    %[[LE:.*]] = graph.less_equal %[[A]], %[[B]] : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi1>
// CHECK-NEXT:    %{{.*}} = graph.greater_equal %[[H]], %[[H]] : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
// CHECK-NEXT:    %[[NE:.*]] = graph.not_equal %[[H]], %[[H]] : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
// CHECK-NEXT:    %[[AND:.*]] = graph.bitwise_and %[[LE]], %[[M]] : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
// CHECK-NEXT:    %[[OR:.*]] = graph.bitwise_or %[[AND]], %[[NE]] : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
// CHECK-NEXT:    %[[XOR:.*]] = graph.bitwise_xor %[[A]], %[[B]] : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi8>
// CHECK-NEXT:    %{{.*}} = graph.bitwise_not %[[OR]] : (tensor<2x4xi1>) -> tensor<2x4xi1>
// CHECK-NEXT:    %[[MOD:.*]] = graph.mod %[[XOR]], %[[B]] : (tensor<2x4xi8>, tensor<4xi8>) -> tensor<2x4xi8>
// CHECK-NEXT:    func.return %[[MOD]] : tensor<2x4xi8>

// Lowered: xor of integers is (a | b) - (a & b); not of i1 is `== false`; mod
// never divides by 0 or -1 (both give 0) and floors.
// TE-LABEL: func.func @bitwise_xor_5(
// TE:         %[[OR:.*]] = arith.ori %[[X:.*]], %[[Y:.*]] : i8
// TE-NEXT:    %[[AND:.*]] = arith.andi %[[X]], %[[Y]] : i8
// TE-NEXT:    arith.subi %[[OR]], %[[AND]] : i8
// TE-LABEL: func.func @bitwise_not_6(
// TE:         %[[FALSE:.*]] = arith.constant false
// TE-NEXT:    arith.cmpi eq, %{{.*}}, %[[FALSE]] : i1
// TE-LABEL: func.func @mod_7(
// TE:         %[[ZERO:.*]] = arith.constant 0 : i8
// TE-NEXT:    %[[IS0:.*]] = arith.cmpi eq, %[[D:.*]], %[[ZERO]] : i8
// TE-NEXT:    %[[M1:.*]] = arith.constant -1 : i8
// TE-NEXT:    %[[ISM1:.*]] = arith.cmpi eq, %[[D]], %[[M1]] : i8
// TE-NEXT:    arith.ori %[[IS0]], %[[ISM1]] : i1
// TE:         %[[Q:.*]] = arith.floordivsi
// TE-NEXT:    %[[P:.*]] = arith.muli %[[Q]]
// TE-NEXT:    arith.subi %{{.*}}, %[[P]] : i8
