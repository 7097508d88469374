"""Automated schedule optimization (issue 10): templates with knob spaces, a resumable
JSON-lines log, loop features, an XGBoost rank model, simulated annealing, isolated
measurement (local processes or dask.distributed), task extraction from models.

    from tilecraft.autotune import tune_model
    tune_model("model.onnx", "tune.jsonl", trials=64)
    m = tilecraft.compile("model.onnx", tuning_log="tune.jsonl")
"""

from tilecraft.autotune.tasks import Task, extract_tasks, tune_model, tune_tasks

__all__ = ["Task", "extract_tasks", "tune_model", "tune_tasks"]
