"""What the client returns: small read-only views of the tracker's answers.

Each view carries the fields people use from Python, with JSON strings
already parsed (`best_config`, `config`, `record`), and keeps the message it
was made from in `.proto` for everything else (see proto/fleet.proto).

    status = client.get(job_id)           # JobStatus
    status.state, status.trials_done, status.best_gflops, status.done
    for event in client.watch(job_id):    # JobEvent
        event.trial_id, event.cost_s, event.status.best_gflops
"""

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from tunefleet._proto import fleet_pb2

# A job in one of these states never changes again.
FINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})

# MeasureErrorNo (tuner_core/measure/measure.h): 0 is NO_ERROR.
NO_ERROR = 0


def _json_or_none(text: str) -> Optional[Any]:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _mean(costs: Tuple[float, ...]) -> Optional[float]:
    return sum(costs) / len(costs) if costs else None


@dataclass(frozen=True)
class TaskStatus:
    """One task of a job (a one-task job has one)."""

    index: int
    name: str
    weight: float
    trials_done: int
    trials_failed: int
    best_gflops: float
    best_cost_s: float  # 0: no success yet
    best_config: Optional[Dict[str, Any]]
    best_figure: str  # "validated", "search" or "" (no best yet)
    proto: Any = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, t: "fleet_pb2.TaskStatus") -> "TaskStatus":
        return cls(
            index=t.index,
            name=t.name,
            weight=t.weight,
            trials_done=t.trials_done,
            trials_failed=t.trials_failed,
            best_gflops=t.best_gflops,
            best_cost_s=t.best_cost_s,
            best_config=_json_or_none(t.best_config_json),
            best_figure=t.best_figure,
            proto=t,
        )


@dataclass(frozen=True)
class JobStatus:
    """A job as the tracker sees it now."""

    job_id: str
    state: str  # "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"
    name: str
    n_trial: int
    trials_done: int
    trials_failed: int
    trials_in_flight: int
    best_gflops: float
    best_cost_s: float
    best_config: Optional[Dict[str, Any]]
    best_figure: str  # "validated", "search" or "" (no best yet)
    message: str  # why it failed or ended early
    tasks: Tuple[TaskStatus, ...]
    estimated_latency_s: float  # a model job's sum of weight x best cost
    proto: Any = field(repr=False, compare=False)

    @property
    def done(self) -> bool:
        """Whether the job reached a final state."""
        return self.state in FINAL_STATES

    @classmethod
    def from_proto(cls, s: "fleet_pb2.JobStatus") -> "JobStatus":
        return cls(
            job_id=s.job_id,
            state=fleet_pb2.JobState.Name(s.state),
            name=s.spec.name,
            n_trial=s.spec.n_trial,
            trials_done=s.trials_done,
            trials_failed=s.trials_failed,
            trials_in_flight=s.trials_in_flight,
            best_gflops=s.best_gflops,
            best_cost_s=s.best_cost_s,
            best_config=_json_or_none(s.best_config_json),
            best_figure=s.best_figure,
            message=s.message,
            tasks=tuple(TaskStatus.from_proto(t) for t in s.tasks),
            estimated_latency_s=s.estimated_latency_s,
            proto=s,
        )


@dataclass(frozen=True)
class JobEvent:
    """One event of `Client.watch`: a finished trial, or a change of state.

    `trial_id` is None for a state change; `status` is the job after the
    event either way. A validation measurement (a re-measurement of a
    winner once the search ended) has `validates` set to the trial it
    re-measures.
    """

    status: JobStatus
    trial_id: Optional[int]
    task_index: int
    config: Optional[Dict[str, Any]]
    costs: Tuple[float, ...]  # seconds per run, one per repeat
    error_no: int  # MeasureErrorNo; 0 is success
    error_msg: str
    validates: Optional[int]
    proto: Any = field(repr=False, compare=False)

    @property
    def is_state_change(self) -> bool:
        return self.trial_id is None

    @property
    def ok(self) -> bool:
        """A trial that measured without error (False for a state change)."""
        return self.trial_id is not None and self.error_no == NO_ERROR

    @property
    def cost_s(self) -> Optional[float]:
        """The trial's mean cost in seconds; None unless `ok`."""
        return _mean(self.costs) if self.ok else None

    @classmethod
    def from_proto(cls, e: "fleet_pb2.JobEvent") -> "JobEvent":
        is_trial = e.trial_id >= 0
        return cls(
            status=JobStatus.from_proto(e.status),
            trial_id=e.trial_id if is_trial else None,
            task_index=e.task_index,
            config=_json_or_none(e.config_json) if is_trial else None,
            costs=tuple(e.result.costs) if is_trial else (),
            error_no=e.result.error_no if is_trial else NO_ERROR,
            error_msg=e.result.error_msg if is_trial else "",
            validates=e.validates if e.HasField("validates") and e.validates >= 0 else None,
            proto=e,
        )


@dataclass(frozen=True)
class Best:
    """A job's (or a task's) winning record."""

    record_line: str  # AutoTVM's JSON line, as `export` writes it
    record: Dict[str, Any]  # record_line parsed
    gflops: float
    figure: str  # "validated" (median of passes) or "search"
    search_gflops: float
    rel_spread: float  # validated: (max - min) / median over the passes
    passes: int  # validated: successful passes
    proto: Any = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, b: "fleet_pb2.BestConfigResponse") -> "Best":
        return cls(
            record_line=b.record_line,
            record=_json_or_none(b.record_line) or {},
            gflops=b.gflops,
            figure=b.figure,
            search_gflops=b.search_gflops,
            rel_spread=b.rel_spread,
            passes=b.passes,
            proto=b,
        )


@dataclass(frozen=True)
class Device:
    """A connected worker: a builder, a device agent or a tuner."""

    worker_id: str
    name: str
    role: str  # "BUILDER", "AGENT", "TUNER"
    device_key: str  # agents only
    state: str  # "free", "busy", "calibrating", "quarantined"
    parallelism: int
    leases: int
    completed: int  # builds / measurements / jobs finished
    peer: str
    arch: str
    cpu_model: str
    gpu_name: str
    quarantine: str  # why, when quarantined
    proto: Any = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, w: "fleet_pb2.WorkerStatus") -> "Device":
        return cls(
            worker_id=w.worker_id,
            name=w.name,
            role=fleet_pb2.WorkerRole.Name(w.role),
            device_key=w.device_key,
            state=w.state,
            parallelism=w.parallelism,
            leases=w.leases,
            completed=w.completed,
            peer=w.peer,
            arch=w.device.arch,
            cpu_model=w.device.cpu_model,
            gpu_name=w.device.gpu_name,
            quarantine=w.quarantine,
            proto=w,
        )
