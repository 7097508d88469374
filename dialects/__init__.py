"""tilecraft's dialects: te (tensor expressions), sched (schedules), loop (loop programs)."""
