"""tilecraft: a deep-learning compiler built the MLIR way on xDSL."""
