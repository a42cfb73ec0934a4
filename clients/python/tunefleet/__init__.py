"""tunefleet: submit kernel-tuning jobs to a TuneFleet tracker and follow them.

    import tunefleet

    client = tunefleet.Client("127.0.0.1:7070", token=tunefleet.read_token("user.token"))
    job_id = client.submit(workload="dense", shape=(512, 512, 512), trials=200, key="local")
    for event in client.watch(job_id):
        if event.ok:
            print(f"trial {event.trial_id}: {event.cost_s * 1e3:.3f} ms, "
                  f"best {event.status.best_gflops:.1f} GFLOPS")
    print(client.best(job_id).record_line)

Client (client.py) talks to the tracker; job_spec and Measure (spec.py) build
what `submit` sends; JobStatus, JobEvent, Best and Device (messages.py) are
what comes back; errors.py has one exception class per gRPC status code.
The gRPC stubs (tunefleet._proto) are generated from proto/fleet.proto by
`bazel build //clients/python:tunefleet`; see clients/python/README.md.
"""

# The generated stubs live in bazel-bin/clients/python/tunefleet/_proto while
# these sources stay in clients/python/tunefleet: with both folders' parents
# on PYTHONPATH, this lets the one package span them.
import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

from tunefleet.client import Client, TlsConfig, read_token  # noqa: E402
from tunefleet.errors import (  # noqa: E402
    Aborted,
    AlreadyExists,
    Cancelled,
    DataLoss,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    TuneFleetError,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
)
from tunefleet.messages import (  # noqa: E402
    FINAL_STATES,
    Best,
    Device,
    JobEvent,
    JobStatus,
    TaskStatus,
)
from tunefleet.spec import Measure, job_spec  # noqa: E402

__all__ = [
    "Aborted",
    "AlreadyExists",
    "Best",
    "Cancelled",
    "Client",
    "DataLoss",
    "DeadlineExceeded",
    "Device",
    "FINAL_STATES",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "JobEvent",
    "JobStatus",
    "Measure",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "ResourceExhausted",
    "TaskStatus",
    "TlsConfig",
    "TuneFleetError",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "job_spec",
    "read_token",
]
