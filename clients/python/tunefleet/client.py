"""Client: the users' side of the tracker's JobService, from Python.

One channel to the tracker, the bearer token on every call (metadata
"authorization: Bearer <token>", as the `tunefleet` CLI sends it), TLS when
given, and every failure raised as a tunefleet.errors class:

    client = Client("tracker.lab:7070", token="...", tls=TlsConfig(ca="ca.pem"))
    job_id = client.submit(workload="dense", shape=(512, 512, 512), trials=200, key="x86-avx2")
    for event in client.watch(job_id):      # ends when the job does
        if event.ok:
            print(event.trial_id, event.cost_s, event.status.best_gflops)
    print(client.best(job_id).gflops)

    client = Client.from_fleet_dir()        # the fleet `tunefleet up` started here

Tracker replicas (several trackers on one PostgreSQL store): give them all,
"a:7070,b:7070". A call a standby refuses (UNAVAILABLE, the leader's address
in the trailing metadata "tunefleet-leader") goes to the leader it names,
else to the next address; other failures are retried elsewhere only for
calls safe to repeat (not submit).
"""

import ipaddress
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, List, Mapping, Optional, Tuple, Union

import grpc

from tunefleet._proto import fleet_pb2, fleet_pb2_grpc
from tunefleet.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    TuneFleetError,
    error_for,
    from_rpc_error,
)
from tunefleet.messages import Best, Device, JobEvent, JobStatus
from tunefleet.spec import job_spec

# Record exports can be large; the C++ client accepts the same.
_MAX_RECEIVE_BYTES = 128 << 20
_MAX_RECONNECT_BACKOFF_MS = 5000
# The trailing metadata a standby tracker names the leader in.
LEADER_METADATA_KEY = "tunefleet-leader"


def _read_file(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise NotFound(f"cannot read {what} {path}: no such file") from None
    except PermissionError:
        raise PermissionDenied(f"cannot read {what} {path}: permission denied") from None
    except OSError as e:
        raise TuneFleetError(f"cannot read {what} {path}: {e.strerror}") from None


def read_token(path: str) -> str:
    """The token in a token file (as `tunefleet up` writes <dir>/user.token)."""
    token = _read_file(path, "token file").decode("utf-8", errors="replace").strip()
    if not token:
        raise InvalidArgument(f"token file {path} is empty")
    return token


@dataclass(frozen=True)
class TlsConfig:
    """TLS to the tracker, like the CLI's --tls_ca, --tls_cert, --tls_key.

    ca: PEM file of the CA that signed the tracker's certificate. cert, key:
    this client's certificate and key, for trackers that require client
    certificates (both or neither). server_name: the name to check the
    tracker's certificate against when it differs from the address's host.
    """

    ca: str
    cert: Optional[str] = None
    key: Optional[str] = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert is None) != (self.key is None):
            raise InvalidArgument("TLS: give both the client certificate and its key, or neither")
        return grpc.ssl_channel_credentials(
            root_certificates=_read_file(self.ca, "TLS CA"),
            private_key=_read_file(self.key, "TLS key") if self.key else None,
            certificate_chain=_read_file(self.cert, "TLS certificate") if self.cert else None,
        )


def is_loopback_address(address: str) -> bool:
    """Whether host:port names a loopback address: an IPv4 literal in
    127.0.0.0/8, the IPv6 literal ::1 (in brackets), or "localhost"; a host
    name that only begins with "127." is not one (as the tracker decides)."""
    host = address
    if host.startswith("["):
        host = host[1 : host.find("]")]
    elif ":" in host:
        host = host[: host.rfind(":")]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _tls_config(tls: Union[TlsConfig, str, Mapping[str, str], None]) -> Optional[TlsConfig]:
    if tls is None or isinstance(tls, TlsConfig):
        return tls
    if isinstance(tls, str):  # the CA's path alone
        return TlsConfig(ca=tls)
    if isinstance(tls, Mapping):
        try:
            return TlsConfig(**tls)
        except TypeError as e:
            raise InvalidArgument(f"tls: {e} (keys: ca, cert, key, server_name)") from None
    raise InvalidArgument(f"tls must be a TlsConfig, a CA path or a dict, got {type(tls).__name__}")


class Client:
    """A connection to one tracker's job API. Thread-safe; close() when done."""

    def __init__(
        self,
        address: str,
        token: Optional[str] = None,
        tls: Union[TlsConfig, str, Mapping[str, str], None] = None,
        *,
        timeout_s: float = 30.0,
        insecure: bool = False,
    ):
        """address: the tracker's host:port, or its replicas' ("a:7070,b:7070").
        token: the caller's token (None:
        send none; a tracker with tokens then answers Unauthenticated).
        tls: a TlsConfig, a CA file's path, or a dict of TlsConfig's fields;
        None is plaintext, which this client sends to a loopback address
        only unless insecure=True (a token in plaintext over a network is
        anyone's on the path).
        timeout_s: the deadline of each unary call (not of watch/export)."""
        self._listed = [a.strip() for a in address.split(",") if a.strip()] or [address]
        self.address = self._listed[0]
        self._next = 1 % len(self._listed)
        self._timeout_s = timeout_s
        self._metadata: Tuple[Tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._config = _tls_config(tls)
        self._insecure = insecure
        self._options = [
            ("grpc.max_receive_message_length", _MAX_RECEIVE_BYTES),
            # After a tracker restart, try again within seconds (gRPC's own
            # backoff grows to 2 minutes).
            ("grpc.max_reconnect_backoff_ms", _MAX_RECONNECT_BACKOFF_MS),
        ]
        if self._config is None and not insecure:
            for listed in self._listed:
                if not is_loopback_address(listed):
                    raise FailedPrecondition(
                        f"refusing plaintext to {listed}, which is not a loopback address: "
                        "its token and everything it is sent could be read and forged on the "
                        "way. Pass tls= (the tracker's CA), or insecure=True to accept that"
                    )
        elif self._config is not None and self._config.server_name:
            self._options.append(("grpc.ssl_target_name_override", self._config.server_name))
        self._lock = threading.Lock()
        self._dial()

    def _dial(self) -> None:
        if self._config is None:
            self._channel = grpc.insecure_channel(self.address, options=self._options)
        else:
            self._channel = grpc.secure_channel(
                self.address, self._config.credentials(), options=self._options
            )
        self._stub = fleet_pb2_grpc.JobServiceStub(self._channel)

    def _follow(self, error: grpc.RpcError, safe_to_repeat: bool) -> bool:
        """After a call failed: True when it should be sent again, to the
        tracker now current (the leader a standby named, or the next listed
        replica). In plaintext a named leader is followed only to a loopback
        or listed address, so a standby cannot send the token elsewhere."""
        # A tracker that does not answer in time (hung, or stopped with its
        # socket open) is left too, for calls safe to repeat.
        silent = error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        if error.code() != grpc.StatusCode.UNAVAILABLE and not (silent and safe_to_repeat):
            return False
        hint = ""
        for key, value in error.trailing_metadata() or ():
            if key == LEADER_METADATA_KEY:
                hint = value
        standby = bool(hint) or (error.details() or "").startswith("standby tracker")
        if not standby and not safe_to_repeat:
            return False
        with self._lock:
            before = self.address
            if hint and (
                self._config is not None
                or self._insecure
                or hint in self._listed
                or is_loopback_address(hint)
            ):
                self.address = hint
            else:
                self.address = self._listed[self._next]
                self._next = (self._next + 1) % len(self._listed)
            if self.address == before:
                return False
            # The old channel is not closed here: another thread may be
            # calling on it; it closes when the last reference goes.
            self._dial()
        return True

    @classmethod
    def from_fleet_dir(cls, fleet_dir: Optional[str] = None, **kwargs: Any) -> "Client":
        """A client of the fleet `tunefleet up` runs in `fleet_dir` (default:
        $TUNEFLEET_DIR, else ./.tunefleet): its address and user.token files."""
        directory = fleet_dir or os.environ.get("TUNEFLEET_DIR") or ".tunefleet"
        try:
            address = _read_file(os.path.join(directory, "address"), "fleet address").decode()
        except NotFound:
            raise NotFound(
                f"no fleet in {directory} (start one with `tunefleet up`, or give an address)"
            ) from None
        token_path = os.path.join(directory, "user.token")
        token = read_token(token_path) if os.path.exists(token_path) else None
        return cls(address.strip(), token=kwargs.pop("token", token), **kwargs)

    def close(self) -> None:
        with self._lock:
            self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _unary(self, name: str, request: Any) -> Any:
        for _ in range(len(self._listed) + 2):
            try:
                return getattr(self._stub, name)(
                    request, timeout=self._timeout_s, metadata=self._metadata
                )
            except grpc.RpcError as e:
                if not self._follow(e, safe_to_repeat=name != "SubmitJob"):
                    raise from_rpc_error(e, name) from None
        raise error_for(grpc.StatusCode.UNAVAILABLE, "no tracker replica answered", name)

    # ------------------------------------------------------------- jobs

    def submit(self, spec: Optional["fleet_pb2.JobSpec"] = None, **kwargs: Any) -> str:
        """Submits a job and returns its id.

        Keyword arguments are those of tunefleet.job_spec (workload, shape or
        args, trials, tuner, key, measure, ...); or pass a JobSpec proto.
        """
        if spec is None:
            spec = job_spec(**kwargs)
        elif kwargs:
            raise InvalidArgument("give a JobSpec or keyword arguments, not both")
        response = self._unary("SubmitJob", fleet_pb2.SubmitJobRequest(spec=spec))
        return response.job_id

    def get(self, job_id: str) -> JobStatus:
        return JobStatus.from_proto(self._unary("GetJob", fleet_pb2.GetJobRequest(job_id=job_id)))

    def jobs(self, include_finished: bool = False) -> List[JobStatus]:
        response = self._unary(
            "ListJobs", fleet_pb2.ListJobsRequest(include_finished=include_finished)
        )
        return [JobStatus.from_proto(j) for j in response.jobs]

    def cancel(self, job_id: str) -> JobStatus:
        """Cancels a job; returns its status (CANCELLED, or its final state
        if it had already ended)."""
        return JobStatus.from_proto(
            self._unary("CancelJob", fleet_pb2.CancelJobRequest(job_id=job_id))
        )

    def watch(
        self,
        job_id: str,
        *,
        timeout_s: Optional[float] = None,
        reconnect_s: float = 120.0,
    ) -> Iterator[JobEvent]:
        """The job's events as they happen: one per finished trial (and
        validation measurement), one per change of state. The iterator ends
        after the event of a final state (SUCCEEDED, FAILED, CANCELLED), or
        when the tracker ends the stream.

        A tracker that goes away (Unavailable: restarting, network) is waited
        for, up to `reconnect_s` without an event, and the watch resumes from
        the job's state then (the first event after a reconnect repeats the
        current status). timeout_s bounds the whole watch: DeadlineExceeded.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        backoff_s = 0.25
        waited_s = 0.0
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise error_for(
                    grpc.StatusCode.DEADLINE_EXCEEDED, "the watch's timeout passed", "WatchJob"
                )
            call = self._stub.WatchJob(
                fleet_pb2.WatchJobRequest(job_id=job_id),
                timeout=remaining,
                metadata=self._metadata,
            )
            try:
                for message in call:
                    waited_s = 0.0
                    event = JobEvent.from_proto(message)
                    yield event
                    if event.is_state_change and event.status.done:
                        return
                return  # the tracker ended the stream
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or waited_s >= reconnect_s:
                    raise from_rpc_error(e, "WatchJob") from None
                if self._follow(e, safe_to_repeat=True):
                    continue  # a standby named the leader, or another replica: no wait
            finally:
                call.cancel()  # no-op once it ended; stops it if the caller stopped iterating
            if deadline is not None:
                backoff_s = min(backoff_s, max(0.0, deadline - time.monotonic()))
            time.sleep(backoff_s)
            waited_s += backoff_s
            backoff_s = min(2 * backoff_s, 5.0)

    def wait(self, job_id: str, *, timeout_s: Optional[float] = None) -> JobStatus:
        """Watches the job until it ends and returns its final status."""
        last: Optional[JobStatus] = None
        for event in self.watch(job_id, timeout_s=timeout_s):
            last = event.status
        return last if last is not None and last.done else self.get(job_id)

    def best(self, job_id: str, task_index: Optional[int] = None) -> Best:
        """The job's winning record (of task `task_index` of a model job)."""
        request = fleet_pb2.BestConfigRequest(job_id=job_id)
        if task_index is not None:
            request.task_index = task_index
        return Best.from_proto(self._unary("BestConfig", request))

    def export(self, job_id: Optional[str] = None, task_index: Optional[int] = None) -> List[str]:
        """The job's records as AutoTVM JSON lines (every job's when job_id
        is None; one task's with task_index)."""
        request = fleet_pb2.ExportRecordsRequest(job_id=job_id or "")
        if task_index is not None:
            request.task_index = task_index
        for _ in range(len(self._listed) + 2):
            lines: List[str] = []
            try:
                for chunk in self._stub.ExportRecords(request, metadata=self._metadata):
                    lines.extend(chunk.lines)
                return lines
            except grpc.RpcError as e:
                # Lines already read: the export broke midway; not repeated.
                if lines or not self._follow(e, safe_to_repeat=True):
                    raise from_rpc_error(e, "ExportRecords") from None
        raise error_for(grpc.StatusCode.UNAVAILABLE, "no tracker replica answered", "ExportRecords")

    # ------------------------------------------------------------- fleet

    def devices(self) -> List[Device]:
        """The connected builders, agents and tuners."""
        response = self._unary("ListDevices", fleet_pb2.ListDevicesRequest())
        return [Device.from_proto(w) for w in response.workers]

    def queue(self) -> "fleet_pb2.QueueSummaryResponse":
        """Per device key and per job: what is waiting and in flight."""
        return self._unary("QueueSummary", fleet_pb2.QueueSummaryRequest())

