"""The errors of the TuneFleet client: one class per gRPC status code.

Every failed call raises a subclass of `TuneFleetError` whose message is
"<what was asked>: <the tracker's message>" (like the C++ client's); the
tracker's own message is kept unchanged in `.details` and the gRPC code in
`.code`, so callers branch on the class and humans read the message:

    try:
        client.submit(workload="dense", shape=(0, 64, 64))
    except tunefleet.InvalidArgument as e:
        print("refused:", e.details)
    except tunefleet.Unavailable:
        ...  # the tracker is down or restarting: retry later

A few classes also derive from the matching Python built-in, so generic
handlers work: InvalidArgument is a ValueError, NotFound a LookupError,
DeadlineExceeded a TimeoutError and Unavailable a ConnectionError.
"""

from typing import Dict, Optional, Type

import grpc


class TuneFleetError(Exception):
    """A call to the tracker failed (or was refused before it was sent)."""

    # The gRPC code this class stands for; the subclasses set it.
    grpc_code: Optional[grpc.StatusCode] = None

    def __init__(self, message: str, details: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.details = message if details is None else details

    @property
    def code(self) -> Optional[grpc.StatusCode]:
        return self.grpc_code

    def __str__(self) -> str:
        return self.message


class Cancelled(TuneFleetError):
    grpc_code = grpc.StatusCode.CANCELLED


class Unknown(TuneFleetError):
    grpc_code = grpc.StatusCode.UNKNOWN


class InvalidArgument(TuneFleetError, ValueError):
    """The request is wrong (a bad shape, tuner, option); do not retry it."""

    grpc_code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceeded(TuneFleetError, TimeoutError):
    grpc_code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(TuneFleetError, LookupError):
    """No such job (or record, or file)."""

    grpc_code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(TuneFleetError):
    grpc_code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(TuneFleetError):
    """Authenticated, but the token's role may not do this."""

    grpc_code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(TuneFleetError):
    grpc_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(TuneFleetError):
    """The fleet is not in a state to do this; retrying will not help."""

    grpc_code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(TuneFleetError):
    grpc_code = grpc.StatusCode.ABORTED


class OutOfRange(TuneFleetError):
    grpc_code = grpc.StatusCode.OUT_OF_RANGE


class Unimplemented(TuneFleetError):
    grpc_code = grpc.StatusCode.UNIMPLEMENTED


class Internal(TuneFleetError):
    grpc_code = grpc.StatusCode.INTERNAL


class Unavailable(TuneFleetError, ConnectionError):
    """The tracker cannot be reached (down, restarting); the call may be retried."""

    grpc_code = grpc.StatusCode.UNAVAILABLE


class DataLoss(TuneFleetError):
    grpc_code = grpc.StatusCode.DATA_LOSS


class Unauthenticated(TuneFleetError):
    """No token, or one the tracker does not know."""

    grpc_code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: Dict[grpc.StatusCode, Type[TuneFleetError]] = {
    cls.grpc_code: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
}


def error_for(code: grpc.StatusCode, details: str, what: str) -> TuneFleetError:
    """The error of class `code` saying "<what>: <details>"."""
    cls = _BY_CODE.get(code, TuneFleetError)
    return cls(f"{what}: {details}", details=details)


def from_rpc_error(error: grpc.RpcError, what: str) -> TuneFleetError:
    """The TuneFleetError of a failed call to `what` (e.g. "SubmitJob")."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return error_for(code, details or str(code), what)
