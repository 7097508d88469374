// RUN: not tilecraft-opt %s -p 'infer-alignment{argument-alignment=12}' 2>&1 | filecheck %s

// CHECK: infer-alignment: argument-alignment must be a power of two, not 12
func.func @f() {
  func.return
}
