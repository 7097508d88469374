"""Automated schedule optimization (issue 10): templates with knob spaces, a resumable
JSON-lines log, loop features, an XGBoost rank model, simulated annealing, isolated
measurement (local processes or dask.distributed), task extraction from models.

    from tilecraft.autotune import tune_model
    tune_model("model.onnx", "tune.jsonl", trials=64)
    m = tilecraft.compile("model.onnx", tuning_log="tune.jsonl")
"""

__all__ = ["Task", "extract_tasks", "tune_model", "tune_tasks"]


def __getattr__(name: str):
    # Imported on first use (PEP 562): the tools import single modules of the
    # package (tilecraft-tune's parser reads tuner.CUTOFF, the handler records'
    # TuningLogError) without the task extraction and its imports.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tilecraft.autotune import tasks

    value = getattr(tasks, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
