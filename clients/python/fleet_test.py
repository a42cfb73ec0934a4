"""tunefleet.Client against a real fleet: tracker, test builder, fake agent, tuner.

The processes are this test's data dependencies, started on 127.0.0.1 with
a fresh token set (write_fleet_tokens: the tracker's token file, 0600, and
one token file per role) as `tunefleet up` would, the tracker on a port the
kernel picks (--port_file). The builder compiles nothing and the fake agent
answers every measurement after a few milliseconds (tests/fake_agent.h), so
a job runs in seconds on any machine. Every wait has a deadline; teardown
stops exactly the processes this test started.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import tunefleet

_WORKSPACE = os.environ.get("TEST_WORKSPACE", "tunefleet")
_ROLES = ("user", "builder", "agent", "tuner")
_KEY = "sim-py"  # the fake agent's device key


def _binary(path):
    root = os.path.join(os.environ.get("TEST_SRCDIR", "."), _WORKSPACE)
    binary = os.path.join(root, path)
    if not os.access(binary, os.X_OK):
        raise FileNotFoundError(f"{binary} is missing: run this test with bazel test")
    return binary


def _wait_for(what, predicate, timeout_s, processes=()):
    """Polls predicate() until it returns something truthy, or fails the test."""
    deadline = time.monotonic() + timeout_s
    last_error = None
    while time.monotonic() < deadline:
        for name, process in processes:
            if process.poll() is not None:
                raise AssertionError(
                    f"{name} exited ({process.returncode}) while waiting for {what}"
                )
        try:
            result = predicate()
            if result:
                return result
        except (OSError, ValueError, tunefleet.TuneFleetError) as e:
            last_error = e
        time.sleep(0.05)
    raise AssertionError(f"no {what} after {timeout_s} s (last error: {last_error})")


class FleetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pyfleet-", dir=os.environ.get("TEST_TMPDIR"))
        cls.logs = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", cls.dir)
        cls.processes = []  # (name, Popen), in start order
        try:
            cls._start_fleet()
        except BaseException:
            cls._stop_fleet()
            raise

    @classmethod
    def tearDownClass(cls):
        cls._stop_fleet()

    @classmethod
    def _spawn(cls, name, argv):
        log = open(os.path.join(cls.logs, f"{name}.log"), "wb")
        process = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        log.close()
        cls.processes.append((name, process))
        return process

    @classmethod
    def _start_fleet(cls):
        subprocess.run(
            [_binary("clients/python/write_fleet_tokens"), cls.dir], check=True, timeout=60
        )
        token_file = os.path.join(cls.dir, "tokens")
        if os.stat(token_file).st_mode & 0o077:
            raise AssertionError(f"{token_file} is readable by others")
        cls.tokens = {
            role: tunefleet.read_token(os.path.join(cls.dir, f"{role}.token")) for role in _ROLES
        }

        cls.tracker_argv = [
            _binary("tracker/tunefleet_tracker"),
            "--port_file=" + os.path.join(cls.dir, "tracker.port"),
            "--store=" + os.path.join(cls.dir, "tracker.db"),
            "--metrics_listen=",
            "--token_file=" + token_file,
            "--heartbeat_s=0.3",
            "--worker_timeout_s=5",
            "--isolate_measurements=false",
        ]
        cls.port = cls._start_tracker(0)
        cls.address = f"127.0.0.1:{cls.port}"

        def worker(name, path, role, *flags):
            cls._spawn(
                name,
                [
                    _binary(path),
                    "--tracker=" + cls.address,
                    "--token_file=" + os.path.join(cls.dir, f"{role}.token"),
                    "--name=" + name,
                    *flags,
                ],
            )

        worker(
            "builder-py", "tests/test_builder", "builder", "--parallelism=2", "--simulate_build_ms=2"
        )
        worker("agent-py", "tests/fake_agent", "agent", "--key=" + _KEY, "--measure_ms=2")
        worker("tuner-py", "tuner_process/tunefleet_tuner", "tuner")

        cls.client = tunefleet.Client(cls.address, token=cls.tokens["user"], timeout_s=10)
        cls._wait_for_workers()

    @classmethod
    def _start_tracker(cls, port):
        """Starts the tracker on `port` (0: any free one); returns the port."""
        port_file = os.path.join(cls.dir, "tracker.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        tracker = cls._spawn("tracker", cls.tracker_argv + [f"--listen=127.0.0.1:{port}"])

        def bound_port():
            with open(port_file) as f:
                text = f.read()
            return int(text) if text.endswith("\n") else None

        return _wait_for("tracker port", bound_port, 30, [("tracker", tracker)])

    @classmethod
    def _wait_for_workers(cls):
        _wait_for(
            "3 registered workers",
            lambda: len(cls.client.devices()) == 3,
            60,
            cls.processes,
        )

    @classmethod
    def _stop_fleet(cls):
        if getattr(cls, "client", None) is not None:
            cls.client.close()
        # Workers first, the tracker last; each gets a grace period after SIGTERM.
        for _, process in reversed(cls.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        cls.processes = []
        shutil.rmtree(cls.dir, ignore_errors=True)

    def _submit_small(self, **overrides):
        kwargs = dict(
            workload="dense",
            shape=(48, 48, 48),
            key=_KEY,
            trials=8,
            tuner="random",
            seed=1,
            measure=tunefleet.Measure(number=2, repeat=2, cooldown_s=0, timeout_s=5),
            validate_top_k=2,
            validation_passes=1,
        )
        kwargs.update(overrides)
        return self.client.submit(**kwargs)

    def test_submit_then_watch_to_the_end_then_best_and_export(self):
        job_id = self._submit_small(name="python client")
        events = list(self.client.watch(job_id, timeout_s=120))

        final = events[-1]
        self.assertTrue(final.is_state_change)
        self.assertEqual(final.status.state, "SUCCEEDED", final.status.message)
        self.assertEqual(final.status.name, "python client")
        trials = [e for e in events if e.trial_id is not None and e.validates is None]
        validations = [e for e in events if e.validates is not None]
        self.assertEqual(len({e.trial_id for e in trials}), 8)
        self.assertTrue(all(e.ok and e.cost_s > 0 for e in trials), [e.error_msg for e in trials])
        self.assertTrue(all(e.config is not None for e in trials))
        self.assertEqual(len(validations), 2)  # top 2, one pass each
        self.assertEqual(final.status.trials_done, 8)
        self.assertGreater(final.status.best_gflops, 0)

        self.assertEqual(self.client.get(job_id).state, "SUCCEEDED")
        self.assertIn(job_id, [j.job_id for j in self.client.jobs(include_finished=True)])
        self.assertNotIn(job_id, [j.job_id for j in self.client.jobs()])

        best = self.client.best(job_id)
        self.assertEqual(best.figure, "validated")
        self.assertGreater(best.gflops, 0)
        self.assertEqual(best.record, json.loads(best.record_line))
        self.assertIn("config", best.record)

        lines = self.client.export(job_id)
        self.assertGreaterEqual(len(lines), 8)
        self.assertIn(best.record_line, lines)
        for line in lines:
            json.loads(line)
        self.assertEqual(len(self.client.export(job_id, task_index=0)), len(lines))

    def test_devices_lists_the_fleet(self):
        devices = {d.name: d for d in self.client.devices()}
        self.assertEqual(set(devices), {"builder-py", "agent-py", "tuner-py"})
        self.assertEqual(devices["agent-py"].role, "AGENT")
        self.assertEqual(devices["agent-py"].device_key, _KEY)
        self.assertEqual(devices["builder-py"].role, "BUILDER")
        self.assertEqual(devices["tuner-py"].role, "TUNER")

    def test_cancel_ends_a_job_and_its_watch(self):
        # No agent has this key, so the job waits until it is cancelled.
        job_id = self._submit_small(key="no-such-agent", trials=1000)
        status = self.client.cancel(job_id)
        self.assertEqual(status.state, "CANCELLED")
        events = list(self.client.watch(job_id, timeout_s=30))
        self.assertEqual(events[-1].status.state, "CANCELLED")
        self.assertEqual(self.client.get(job_id).state, "CANCELLED")

    def test_watch_goes_on_across_a_tracker_restart(self):
        job_id = self._submit_small(trials=40, validate_top_k=0)
        events = self.client.watch(job_id, timeout_s=120)
        first_trial = next(e for e in events if e.trial_id is not None)
        self.assertEqual(first_trial.status.state, "RUNNING")
        self.assertLess(first_trial.status.trials_done, 40)

        # kill -9 the tracker and start it again on the same port and store.
        [(name, tracker)] = [(n, p) for n, p in self.processes if n == "tracker"]
        tracker.kill()
        tracker.wait(timeout=10)
        self.processes.remove((name, tracker))
        self.assertEqual(self._start_tracker(self.port), self.port)

        rest = list(events)  # the same iterator, reconnected
        self.assertEqual(rest[-1].status.state, "SUCCEEDED", rest[-1].status.message)
        self.assertEqual(rest[-1].status.trials_done, 40)
        self.assertEqual(self.client.get(job_id).state, "SUCCEEDED")
        self._wait_for_workers()  # leave the fleet as the other tests expect it

    def test_wrong_or_missing_token_is_unauthenticated(self):
        for token in ("not-the-token-" + "0" * 20, None):
            with self.subTest(token=token):
                with tunefleet.Client(self.address, token=token) as stranger:
                    with self.assertRaises(tunefleet.Unauthenticated) as raised:
                        stranger.devices()
                    self.assertIn("ListDevices", str(raised.exception))
                    with self.assertRaises(tunefleet.Unauthenticated):
                        stranger.submit(workload="dense", shape=(8, 8, 8), key=_KEY)
                    with self.assertRaises(tunefleet.Unauthenticated):
                        list(stranger.watch("job-1", timeout_s=30))
        self.assertNotIn(self.tokens["user"], str(raised.exception))

    def test_a_worker_token_may_not_submit(self):
        with tunefleet.Client(self.address, token=self.tokens["agent"]) as agent:
            with self.assertRaises(tunefleet.PermissionDenied):
                agent.submit(workload="dense", shape=(8, 8, 8), key=_KEY)

    def test_bad_requests_are_invalid_argument_and_unknown_jobs_not_found(self):
        bad = [
            dict(tuner="no-such-tuner"),
            dict(shape=(0, 48, 48)),
            dict(workload="conv2d_nchw", shape=None, args={"N": 1, "C": 8}),
            dict(workload="no_such_workload", shape=None, args={}),
            dict(measure=tunefleet.Measure(timeout_s=100000)),
        ]
        for overrides in bad:
            with self.subTest(overrides=overrides):
                with self.assertRaises(tunefleet.InvalidArgument) as raised:
                    self._submit_small(**overrides)
                self.assertTrue(str(raised.exception).startswith("SubmitJob: "))
                self.assertTrue(raised.exception.details)
        with self.assertRaises(tunefleet.NotFound):
            self.client.get("job-that-never-was")
        with self.assertRaises(tunefleet.NotFound):
            self.client.cancel("job-that-never-was")


if __name__ == "__main__":
    unittest.main()
