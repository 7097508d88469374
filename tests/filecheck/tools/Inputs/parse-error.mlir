// A syntax error: the loop bound must be an integer literal.
func.func @f(%n: index) {
  loop.for %i = 0 to %n {
  }
  func.return
}
