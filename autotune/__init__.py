"""Automated schedule optimization (issue 10): tuning records first; search spaces,
the cost model, the explorer and measurement build on them."""
