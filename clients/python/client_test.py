"""tunefleet.Client against an in-process fake JobService (no tracker).

Checks what the client sends (spec fields, the bearer token), how it maps
gRPC codes to its errors, and how watch ends and reconnects. The real
tracker is exercised by fleet_test.py.
"""

import json
import os
import tempfile
import threading
import unittest
from concurrent import futures

import grpc

import tunefleet
from tunefleet._proto import fleet_pb2, fleet_pb2_grpc


def _status(job_id, state, trials_done=0):
    return fleet_pb2.JobStatus(
        job_id=job_id,
        state=state,
        trials_done=trials_done,
        best_gflops=12.5,
        best_config_json='{"index": 3}',
        spec=fleet_pb2.JobSpec(n_trial=2),
    )


class FakeJobService(fleet_pb2_grpc.JobServiceServicer):
    """Records requests and metadata; answers from what the test set."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.metadata = []
        self.error = None  # (grpc.StatusCode, details) to abort every call with
        self.watch_failures = 0  # WatchJob calls to fail with UNAVAILABLE first
        self.watch_calls = 0

    def _record(self, request, context):
        with self.lock:
            self.requests.append(request)
            self.metadata.append(dict(context.invocation_metadata()))
        if self.error is not None:
            context.abort(*self.error)

    def SubmitJob(self, request, context):
        self._record(request, context)
        return fleet_pb2.SubmitJobResponse(job_id="job-7")

    def GetJob(self, request, context):
        self._record(request, context)
        return _status(request.job_id, fleet_pb2.RUNNING)

    def CancelJob(self, request, context):
        self._record(request, context)
        return _status(request.job_id, fleet_pb2.CANCELLED)

    def WatchJob(self, request, context):
        self._record(request, context)
        with self.lock:
            self.watch_calls += 1
            fail = self.watch_calls <= self.watch_failures
        if fail:
            context.abort(grpc.StatusCode.UNAVAILABLE, "tracker restarting")
        yield fleet_pb2.JobEvent(status=_status(request.job_id, fleet_pb2.RUNNING), trial_id=-1)
        yield fleet_pb2.JobEvent(
            status=_status(request.job_id, fleet_pb2.RUNNING, 1),
            trial_id=0,
            config_json='{"index": 3}',
            result=fleet_pb2.TrialResult(costs=[0.002, 0.004]),
        )
        yield fleet_pb2.JobEvent(
            status=_status(request.job_id, fleet_pb2.RUNNING, 2),
            trial_id=1,
            result=fleet_pb2.TrialResult(costs=[1e9], error_no=4, error_msg="RUN_TIMEOUT"),
        )
        done = _status(request.job_id, fleet_pb2.SUCCEEDED, 2)
        yield fleet_pb2.JobEvent(status=done, trial_id=-1)
        # A watch must end at the final state without waiting for the stream's end.
        yield fleet_pb2.JobEvent(status=done, trial_id=-1)

    def BestConfig(self, request, context):
        self._record(request, context)
        return fleet_pb2.BestConfigResponse(
            record_line='{"config": {"index": 3}}', gflops=12.5, figure="validated", passes=3
        )

    def ExportRecords(self, request, context):
        self._record(request, context)
        yield fleet_pb2.RecordLines(lines=["a", "b"])
        yield fleet_pb2.RecordLines(lines=["c"])

    def ListDevices(self, request, context):
        self._record(request, context)
        return fleet_pb2.ListDevicesResponse(
            workers=[
                fleet_pb2.WorkerStatus(
                    name="agent-0",
                    role=fleet_pb2.AGENT,
                    device_key="sim",
                    state="free",
                    device=fleet_pb2.DeviceInfo(arch="x86_64"),
                )
            ]
        )


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.service = FakeJobService()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        fleet_pb2_grpc.add_JobServiceServicer_to_server(self.service, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.client = tunefleet.Client(f"127.0.0.1:{port}", token="t" * 32, timeout_s=10)

    def tearDown(self):
        self.client.close()
        self.server.stop(grace=None)

    def test_submit_sends_the_spec_and_the_bearer_token(self):
        job_id = self.client.submit(
            workload="dense",
            shape=(64, 32, 16),
            trials=20,
            key="sim",
            tuner="ga",
            measure=tunefleet.Measure(repeat=5, timeout_s=2.5),
            validate_top_k=0,
        )
        self.assertEqual(job_id, "job-7")
        spec = self.service.requests[0].spec
        self.assertEqual(self.service.metadata[0]["authorization"], "Bearer " + "t" * 32)
        self.assertEqual(spec.device_key, "sim")
        self.assertEqual(spec.tuner, "ga")
        self.assertEqual(spec.n_trial, 20)
        self.assertEqual(spec.task.workload_name, "dense")
        self.assertEqual(
            json.loads(spec.task.workload_args_json), {"M": 64, "N": 32, "K": 16, "layout": "NK"}
        )
        self.assertEqual(spec.task.target, "llvm -mcpu=native")
        self.assertEqual(spec.measure.repeat, 5)
        self.assertEqual(spec.measure.timeout_s, 2.5)
        self.assertFalse(spec.measure.HasField("number"))  # left to the tracker
        self.assertTrue(spec.HasField("validate_top_k"))
        self.assertFalse(spec.HasField("validation_passes"))
        self.assertFalse(spec.HasField("early_stopping"))

    def test_no_token_sends_no_authorization(self):
        client = tunefleet.Client(self.client.address)
        client.devices()
        client.close()
        self.assertNotIn("authorization", self.service.metadata[0])

    def test_every_grpc_code_raises_its_class_with_the_message(self):
        cases = {
            grpc.StatusCode.UNAUTHENTICATED: tunefleet.Unauthenticated,
            grpc.StatusCode.PERMISSION_DENIED: tunefleet.PermissionDenied,
            grpc.StatusCode.NOT_FOUND: tunefleet.NotFound,
            grpc.StatusCode.INVALID_ARGUMENT: tunefleet.InvalidArgument,
            grpc.StatusCode.FAILED_PRECONDITION: tunefleet.FailedPrecondition,
            grpc.StatusCode.RESOURCE_EXHAUSTED: tunefleet.ResourceExhausted,
            grpc.StatusCode.INTERNAL: tunefleet.Internal,
        }
        for code, cls in cases.items():
            with self.subTest(code=code):
                self.service.error = (code, f"tracker says {code.name}")
                with self.assertRaises(cls) as raised:
                    self.client.get("job-1")
                self.assertIsInstance(raised.exception, tunefleet.TuneFleetError)
                self.assertEqual(raised.exception.code, code)
                self.assertEqual(raised.exception.details, f"tracker says {code.name}")
                self.assertEqual(str(raised.exception), f"GetJob: tracker says {code.name}")
        # Streams too.
        self.service.error = (grpc.StatusCode.NOT_FOUND, "no job job-9")
        with self.assertRaises(tunefleet.NotFound):
            list(self.client.watch("job-9"))
        with self.assertRaises(tunefleet.NotFound):
            self.client.export("job-9")

    def test_plaintext_off_loopback_is_refused_unless_insecure(self):
        for address in ("tracker.example:7070", "127.attacker.example:1", "10.0.0.5:7070"):
            with self.assertRaises(tunefleet.FailedPrecondition) as raised:
                tunefleet.Client(address, token="tf_1.secret")
            self.assertIn(address, str(raised.exception))
            self.assertIn("insecure=True", str(raised.exception))
        tunefleet.Client("tracker.example:7070", insecure=True).close()
        for address in ("127.0.0.1:1", "[::1]:1", "localhost:1"):
            tunefleet.Client(address).close()

    def test_unreachable_tracker_is_unavailable(self):
        self.server.stop(grace=None)
        with self.assertRaises(tunefleet.Unavailable) as raised:
            self.client.devices()
        self.assertIsInstance(raised.exception, ConnectionError)

    def test_watch_yields_trials_and_ends_at_the_final_state(self):
        events = list(self.client.watch("job-1", timeout_s=30))
        self.assertEqual(len(events), 4)
        self.assertTrue(events[0].is_state_change)
        self.assertEqual(events[1].trial_id, 0)
        self.assertTrue(events[1].ok)
        self.assertAlmostEqual(events[1].cost_s, 0.003)
        self.assertEqual(events[1].config, {"index": 3})
        self.assertFalse(events[2].ok)
        self.assertIsNone(events[2].cost_s)
        self.assertEqual(events[2].error_msg, "RUN_TIMEOUT")
        self.assertEqual(events[3].status.state, "SUCCEEDED")
        self.assertTrue(events[3].status.done)
        self.assertEqual(events[3].status.best_config, {"index": 3})

    def test_watch_reconnects_when_the_tracker_is_unavailable(self):
        self.service.watch_failures = 2
        events = list(self.client.watch("job-1", timeout_s=30))
        self.assertEqual(self.service.watch_calls, 3)
        self.assertEqual(events[-1].status.state, "SUCCEEDED")

    def test_watch_gives_up_after_reconnect_s(self):
        self.service.watch_failures = 100
        with self.assertRaises(tunefleet.Unavailable):
            list(self.client.watch("job-1", reconnect_s=0.5, timeout_s=30))

    def test_wait_returns_the_final_status(self):
        self.assertEqual(self.client.wait("job-1", timeout_s=30).state, "SUCCEEDED")

    def test_best_export_devices_cancel(self):
        best = self.client.best("job-1", task_index=0)
        self.assertEqual(best.record, {"config": {"index": 3}})
        self.assertEqual((best.gflops, best.figure, best.passes), (12.5, "validated", 3))
        self.assertEqual(self.service.requests[-1].task_index, 0)
        self.assertEqual(self.client.export("job-1"), ["a", "b", "c"])
        self.assertFalse(self.service.requests[-1].HasField("task_index"))
        [device] = self.client.devices()
        self.assertEqual((device.name, device.role, device.arch), ("agent-0", "AGENT", "x86_64"))
        self.assertEqual(self.client.cancel("job-1").state, "CANCELLED")


class StandbyJobService(FakeJobService):
    """A standby tracker: refuses every call, naming the leader."""

    def __init__(self, leader):
        super().__init__()
        self.leader = leader

    def _record(self, request, context):
        with self.lock:
            self.requests.append(request)
        if self.leader:
            context.set_trailing_metadata(((tunefleet.client.LEADER_METADATA_KEY, self.leader),))
            context.abort(
                grpc.StatusCode.UNAVAILABLE, f"standby tracker: the leader is at {self.leader}"
            )
        context.abort(grpc.StatusCode.UNAVAILABLE, "standby tracker: no tracker leads yet")


class ReplicasTest(unittest.TestCase):
    def setUp(self):
        self.servers = []
        self.leader = FakeJobService()
        self.leader_address = self._serve(self.leader)
        self.standby = StandbyJobService(self.leader_address)
        self.standby_address = self._serve(self.standby)

    def _serve(self, service):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        fleet_pb2_grpc.add_JobServiceServicer_to_server(service, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.servers.append(server)
        return f"127.0.0.1:{port}"

    def tearDown(self):
        for server in self.servers:
            server.stop(grace=None)

    def test_a_standby_redirects_even_a_submission_to_the_leader(self):
        with tunefleet.Client(self.standby_address, timeout_s=10) as client:
            self.assertEqual(client.submit(fleet_pb2.JobSpec(n_trial=2)), "job-7")
            self.assertEqual(client.address, self.leader_address)
            self.assertEqual(client.get("job-7").state, "RUNNING")
        self.assertEqual(len(self.leader.requests), 2)
        self.assertEqual(len(self.standby.requests), 1)

    def test_a_list_of_replicas_is_tried_in_turn(self):
        self.standby.leader = ""  # no leader named: the next listed address
        address = f"{self.standby_address},{self.leader_address}"
        with tunefleet.Client(address, timeout_s=10) as client:
            self.assertEqual(client.export("job-7"), ["a", "b", "c"])
            self.assertEqual(client.address, self.leader_address)

    def test_plaintext_does_not_follow_a_leader_off_loopback(self):
        self.standby.leader = "tracker.evil.example:7070"
        with tunefleet.Client(self.standby_address, timeout_s=10) as client:
            with self.assertRaises(tunefleet.Unavailable):
                client.get("job-7")
            self.assertEqual(client.address, self.standby_address)

    def test_every_listed_replica_must_be_loopback_in_plaintext(self):
        with self.assertRaises(tunefleet.FailedPrecondition):
            tunefleet.Client("127.0.0.1:1,tracker.example:7070")


class JobSpecTest(unittest.TestCase):
    def test_conv_args_and_a_measure_dict(self):
        args = {"N": 1, "C": 8, "H": 10, "W": 10, "K": 4, "R": 3, "S": 3}
        spec = tunefleet.job_spec(
            workload="conv2d_nchw", args=args, measure={"number": 2}, early_stopping=5
        )
        self.assertEqual(json.loads(spec.task.workload_args_json), args)
        self.assertEqual(spec.measure.number, 2)
        self.assertEqual(spec.early_stopping, 5)

    def test_shape_as_a_string(self):
        spec = tunefleet.job_spec(workload="batch_matmul", shape="2,8,8,8", layout="KN")
        self.assertEqual(
            json.loads(spec.task.workload_args_json),
            {"B": 2, "M": 8, "N": 8, "K": 8, "layout": "KN"},
        )

    def test_bad_requests_are_refused_before_sending(self):
        bad = [
            dict(shape=(1, 2)),  # dense wants 3
            dict(shape="8,x,8"),
            dict(shape=(8, 8.5, 8)),
            dict(),  # neither shape nor args
            dict(shape=(8, 8, 8), args={"M": 8}),
            dict(workload="conv2d_nchw", shape=(8, 8, 8)),
            dict(shape=(8, 8, 8), measure={"repeats": 3}),
        ]
        for kwargs in bad:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(tunefleet.InvalidArgument) as raised:
                    tunefleet.job_spec(**kwargs)
                self.assertIsInstance(raised.exception, ValueError)


class ConfigTest(unittest.TestCase):
    def test_tls_needs_cert_and_key_together(self):
        with self.assertRaises(tunefleet.InvalidArgument):
            tunefleet.Client("127.0.0.1:1", tls={"ca": "/nonexistent", "cert": "c.pem"})

    def test_missing_tls_ca_names_the_file(self):
        with self.assertRaises(tunefleet.NotFound) as raised:
            tunefleet.Client("127.0.0.1:1", tls="/nonexistent/ca.pem")
        self.assertIn("/nonexistent/ca.pem", str(raised.exception))

    def test_from_fleet_dir_reads_address_and_user_token(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(tunefleet.NotFound):
                tunefleet.Client.from_fleet_dir(d)
            with open(os.path.join(d, "address"), "w") as f:
                f.write("127.0.0.1:7070\n")
            with open(os.path.join(d, "user.token"), "w") as f:
                f.write("u" * 32 + "\n")
            client = tunefleet.Client.from_fleet_dir(d)
            self.assertEqual(client.address, "127.0.0.1:7070")
            self.assertEqual(client._metadata, (("authorization", "Bearer " + "u" * 32),))
            client.close()


if __name__ == "__main__":
    unittest.main()
