"""Job specs from keyword arguments: what `tunefleet submit` builds from its flags.

    spec = job_spec(workload="dense", shape=(512, 512, 512), trials=200, key="local")
    spec = job_spec(workload="conv2d_nchw",
                    args={"N": 1, "C": 64, "H": 56, "W": 56, "K": 64, "R": 3, "S": 3,
                          "padding": 1},
                    tuner="xgb", trials=300, measure=Measure(repeat=5, timeout_s=4))

A dense or batch_matmul workload takes `shape` (M,N,K or B,M,N,K, as a
tuple or "M,N,K") and `layout`; any workload takes `args`, its arguments as
a dict (conv2d_nchw's keys: tuner_core/workloads/conv_args.h). Options left
as None are left unset, so the tracker applies its own defaults (the same
as the CLI's). Only the shape of the request is checked here; the tracker
validates the rest and answers InvalidArgument with what was wrong.
"""

import json
import re
from dataclasses import dataclass, fields
from typing import Any, Mapping, Optional, Sequence, Union

from tunefleet._proto import fleet_pb2, runner_pb2
from tunefleet.errors import InvalidArgument

# The shape keys of the workloads that take `shape` (local/tune_command.cc).
_SHAPE_KEYS = {"dense": ("M", "N", "K"), "batch_matmul": ("B", "M", "N", "K")}

# `tunefleet submit`'s target when none is given.
DEFAULT_TARGET = "llvm -mcpu=native"


@dataclass(frozen=True)
class Measure:
    """How each trial is timed (AutoTVM's time evaluator; proto MeasureOptions).

    None leaves a field to the tracker's default: number 4, repeat 3,
    min_repeat_ms 0, cooldown_s 0.1, cache_flush False, timeout_s 10,
    check_correctness True, input_seed 1, max_repeat = repeat, target_rel_ci 0.
    """

    number: Optional[int] = None  # runs per repeat
    repeat: Optional[int] = None
    min_repeat_ms: Optional[int] = None  # grow `number` until a repeat lasts this long
    cooldown_s: Optional[float] = None  # slept once per trial
    cache_flush: Optional[bool] = None  # flush inputs from the CPU caches per repeat
    timeout_s: Optional[float] = None  # per measurement; at most 600
    check_correctness: Optional[bool] = None
    input_seed: Optional[int] = None
    max_repeat: Optional[int] = None  # adaptive repeats' cap
    target_rel_ci: Optional[float] = None  # adaptive repeats: e.g. 0.02 for +-2 %

    def to_proto(self) -> "runner_pb2.MeasureOptions":
        m = runner_pb2.MeasureOptions()
        wire = {
            "number": "number",
            "repeat": "repeat",
            "min_repeat_ms": "min_repeat_ms",
            "cooldown_s": "cooldown_interval_s",
            "cache_flush": "enable_cpu_cache_flush",
            "timeout_s": "timeout_s",
            "check_correctness": "check_correctness",
            "input_seed": "input_seed",
            "max_repeat": "max_repeat",
            "target_rel_ci": "target_rel_ci",
        }
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                setattr(m, wire[f.name], value)
        return m


def _shape_args(workload: str, shape: Union[str, Sequence[int]], layout: str) -> dict:
    keys = _SHAPE_KEYS.get(workload)
    if keys is None:
        raise InvalidArgument(
            f"shape is for dense (M,N,K) and batch_matmul (B,M,N,K); "
            f"give {workload}'s arguments as a dict with args="
        )
    parts = [p.strip() for p in shape.split(",")] if isinstance(shape, str) else list(shape)
    if len(parts) != len(keys):
        raise InvalidArgument(f"shape {shape!r}: {workload} wants {','.join(keys)}")
    args: dict = {"layout": layout}
    for key, part in zip(keys, parts):
        if isinstance(part, str) and re.fullmatch(r"-?[0-9]+", part):
            part = int(part)
        if not isinstance(part, int) or isinstance(part, bool):
            raise InvalidArgument(
                f"shape {shape!r}: {part!r} is not an integer ({workload} wants {','.join(keys)})"
            )
        args[key] = part
    return args


def job_spec(
    *,
    workload: str = "dense",
    shape: Union[str, Sequence[int], None] = None,
    args: Optional[Mapping[str, Any]] = None,
    layout: str = "NK",
    template: str = "",
    target: str = DEFAULT_TARGET,
    key: str = "local",
    name: str = "",
    tuner: str = "random",
    trials: int = 200,
    early_stopping: Optional[int] = None,
    priority: int = 1,
    seed: int = 0,
    window: int = 0,
    max_attempts: int = 0,
    build_timeout_s: float = 0,
    measure: Union[Measure, Mapping[str, Any], None] = None,
    validate_top_k: Optional[int] = None,
    validation_passes: Optional[int] = None,
    queue_timeout_s: Optional[float] = None,
) -> "fleet_pb2.JobSpec":
    """The JobSpec of one tuning task; see the module's docstring.

    key: the device key of the agents that measure it. tuner: "random",
    "grid", "ga", "xgb", ... trials: the job's budget. early_stopping: stop
    after this many trials without a better one. priority: weight when jobs
    share a key. window: trials in flight (0: the tracker's suggestion).
    validate_top_k / validation_passes: re-measure the top k configs this
    many times once the search ends (0: off). queue_timeout_s: fail the job
    when no agent of the key has been connected for this long.
    """
    if (shape is None) == (args is None):
        raise InvalidArgument("give the workload's shape= (dense, batch_matmul) or its args=, once")
    if args is not None:
        if not isinstance(args, Mapping):
            raise InvalidArgument(f"args must be a dict of the workload's arguments, got {args!r}")
        task_args = dict(args)
    else:
        task_args = _shape_args(workload, shape, layout)
    if isinstance(measure, Mapping):
        try:
            measure = Measure(**measure)
        except TypeError as e:
            raise InvalidArgument(f"measure: {e}") from None
    spec = fleet_pb2.JobSpec(
        name=name,
        device_key=key,
        task=fleet_pb2.TaskSpec(
            template_name=template,
            workload_name=workload,
            workload_args_json=json.dumps(task_args, sort_keys=True),
            target=target,
        ),
        tuner=tuner,
        n_trial=trials,
        priority=priority,
        seed=seed,
        window=window,
        max_attempts=max_attempts,
        build_timeout_s=build_timeout_s,
    )
    if measure is not None:
        spec.measure.CopyFrom(measure.to_proto())
    if early_stopping is not None:
        spec.early_stopping = early_stopping
    if validate_top_k is not None:
        spec.validate_top_k = validate_top_k
    if validation_passes is not None:
        spec.validation_passes = validation_passes
    if queue_timeout_s is not None:
        spec.queue_timeout_s = queue_timeout_s
    return spec
