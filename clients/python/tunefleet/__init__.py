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
Model and ModelError (model.py) run a model compiled by `tunefleet compile`
in-process, as an ONNX Runtime InferenceSession does (numpy, no gRPC):

    model = tunefleet.Model("out/")
    outputs = model.run({"input": x})       # {output name: numpy array}

The gRPC stubs (tunefleet._proto) are generated from proto/fleet.proto by
`bazel build //clients/python:tunefleet`; see clients/python/README.md.
"""

# The generated stubs live in bazel-bin/clients/python/tunefleet/_proto while
# these sources stay in clients/python/tunefleet: with both folders' parents
# on PYTHONPATH, this lets the one package span them.
import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

# Everything is imported on first use (PEP 562), so that `tunefleet.Model`
# needs neither gRPC nor the generated stubs, and the client needs no numpy.
_EXPORTS = {
    "Client": "client",
    "TlsConfig": "client",
    "read_token": "client",
    "Aborted": "errors",
    "AlreadyExists": "errors",
    "Cancelled": "errors",
    "DataLoss": "errors",
    "DeadlineExceeded": "errors",
    "FailedPrecondition": "errors",
    "Internal": "errors",
    "InvalidArgument": "errors",
    "NotFound": "errors",
    "OutOfRange": "errors",
    "PermissionDenied": "errors",
    "ResourceExhausted": "errors",
    "TuneFleetError": "errors",
    "Unauthenticated": "errors",
    "Unavailable": "errors",
    "Unimplemented": "errors",
    "Unknown": "errors",
    "FINAL_STATES": "messages",
    "Best": "messages",
    "Device": "messages",
    "JobEvent": "messages",
    "JobStatus": "messages",
    "TaskStatus": "messages",
    "Measure": "spec",
    "job_spec": "spec",
    "Model": "model",
    "ModelError": "model",
}


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


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
    "Model",
    "ModelError",
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
