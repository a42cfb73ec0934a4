#!/usr/bin/python3
"""ONNX backend node-test conformance harness for `tunefleet compile` and `tunefleet run`.

Generates ONNX's backend node tests (onnx.backend.test.case.node, the generators
`python3 -m onnx.backend.test.cmd_tools generate-data` runs) into a work directory
laid out as generate-data writes them (<work_dir>/data/<test>/model.onnx and
test_data_set_0/{input,output}_<j>.pb), keeps the float32 tests of the operators the
compiler claims, and for each one:

  1. rewrites model.onnx so that every graph input after the first is an initializer
     holding the test's value (the compiler packs weights at compile time; only the
     first input stays a runtime input),
  2. runs  tunefleet compile --model M.onnx -o OUT
     and   tunefleet run --model OUT --input x.npy --output y0.npy,y1.npy,... --runs 1,
  3. compares every output with the test's.

Each test ends as one of:
  pass        same shape and |got - expected| <= 1e-4 + 1e-4 * |expected| everywhere
  refused     compile exited non-zero (first line of its error), or timed out
  wrong       ran, but the numbers (or the shape) differ: the max error
  run_failed  compiled, but run exited non-zero, timed out, or wrote no output
  skipped     not run, with the reason: a non-float32 input or output (inputs after
              the first may also be int64: they become initializers, e.g. Reshape's
              shape), no input to feed, or (an *_expanded function test) a node of an
              operator the compiler does not claim

Which operators: the first word of each line `tunefleet operators` prints, or --ops
(which overrides it). A test belongs to the operator of its single node; an
<test>_expanded test (an ONNX function's body) belongs to the operator of <test>.

Prints a per-operator table (tests, pass, refused, wrong, run_failed, skipped, pass
rate = pass / (tests - skipped)), the totals, and one line per test that did not pass.

Exit status: 0 when every run test passed or was refused; 1 when any test is wrong
or run_failed (a claimed operator must be right or refused by name), or the overall
pass rate is below --min_pass_rate; 2 when it cannot start (no binary, no operators).

Run it with Debian's python3 (it has python3-onnx 1.12 and numpy), from the
repository root after `bazel build //cli:tunefleet`:

  /usr/bin/python3 tests/onnx_node_tests.py
  /usr/bin/python3 tests/onnx_node_tests.py \\
      --tunefleet /tmp/tunefleet --ops Relu,Add,Softmax,MaxPool,Transpose,Conv \\
      --filter 'conv|pool' --jobs 2 --json /tmp/conformance.json --keep

Flags: --tunefleet PATH (default ./bazel-bin/cli/tunefleet), --ops A,B,...,
--filter REGEX (re.search on test names), --work_dir DIR (default: a fresh temporary
directory, removed at the end unless --keep; a DIR you name is never removed, and
must be outside the repository), --keep, --jobs N (default 1), --timeout SECONDS per
command (default 120), --json FILE, --min_pass_rate R (0 to 1, default 0).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib
import json
import os
import pkgutil
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

STATUSES = ("pass", "refused", "wrong", "run_failed", "skipped")
FAILING_STATUSES = ("wrong", "run_failed")
ATOL = 1e-4
RTOL = 1e-4
REPOSITORY = Path(__file__).resolve().parents[2]

# NumPy 1.20 deprecated these aliases of builtins and 1.24 removed them; onnx 1.12's
# test generators still use some (np.float in bernoulli, np.object in castlike, ...).
REMOVED_NUMPY_ALIASES = {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "object": object,
    "str": str,
    "long": int,
    "unicode": str,
}


class SetupError(Exception):
    """The harness cannot start: the message says why and what to do."""


@dataclasses.dataclass
class NodeTest:
    name: str
    operator: str
    directory: Path  # holds model.onnx and test_data_set_0/


@dataclasses.dataclass
class Result:
    test: str
    operator: str
    status: str
    reason: str = ""
    max_error: float | None = None
    note: str = ""


@dataclasses.dataclass
class CommandOutcome:
    ok: bool
    message: str = ""


# ---------------------------------------------------------------------------
# Generating the node tests


def restore_numpy_aliases() -> None:
    """Puts back the NumPy aliases onnx 1.12's generators use, where they are missing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns when some of them are probed
        for name, alias in REMOVED_NUMPY_ALIASES.items():
            if not hasattr(np, name):
                setattr(np, name, alias)


def collect_node_testcases() -> tuple[list, dict[str, str]]:
    """ONNX's node test cases, and {generator module: error} for those that failed.

    onnx's collect_testcases() imports every generator module and stops at the first
    that raises; importing them one by one keeps the cases of all the others.
    """
    restore_numpy_aliases()
    import onnx.backend.test.case.node as node_cases

    failed: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in pkgutil.iter_modules(node_cases.__path__):
            try:
                importlib.import_module(f"{node_cases.__name__}.{module.name}")
            except Exception as error:  # any generator bug: report it, keep the rest
                failed[module.name] = f"{type(error).__name__}: {first_line(str(error))}"
    return list(node_cases._NodeTestCases), failed


def operator_of_each(cases: Iterable) -> dict[str, str]:
    """{test name: operator}: its node's op type; an _expanded test takes its twin's."""
    operators = {c.name: c.model.graph.node[0].op_type
                 for c in cases if len(c.model.graph.node) == 1}
    for case in cases:
        if case.name not in operators:
            operators[case.name] = operators.get(case.name.removesuffix("_expanded"), "?")
    return operators


def write_testcase(case, directory: Path) -> None:
    """Writes one case as generate-data does: model.onnx and test_data_set_0/*.pb.

    Only tensor values are written; a test with a sequence, map or optional value is
    skipped before its data is read.
    """
    from onnx import numpy_helper

    data_set = directory / "test_data_set_0"
    data_set.mkdir(parents=True, exist_ok=True)
    (directory / "model.onnx").write_bytes(case.model.SerializeToString())
    inputs, outputs = case.data_sets[0]
    graph = case.model.graph
    for prefix, infos, values in (("input", graph.input, inputs), ("output", graph.output, outputs)):
        for j, (info, value) in enumerate(zip(infos, values)):
            if info.type.HasField("tensor_type"):
                tensor = numpy_helper.from_array(np.asarray(value), info.name)
                (data_set / f"{prefix}_{j}.pb").write_bytes(tensor.SerializeToString())


def generate_tests(data_dir: Path, operators: set[str], name_filter: str | None
                   ) -> tuple[list[NodeTest], dict[str, str]]:
    """Writes the node tests of `operators` (matching name_filter) under data_dir."""
    cases, failed_generators = collect_node_testcases()
    operator_by_name = operator_of_each(cases)
    # Two generators reuse a name; as in generate-data, the later case wins.
    by_name = {c.name: c for c in cases}
    tests = []
    for name in sorted(by_name):
        operator = operator_by_name[name]
        if operator not in operators or (name_filter and not re.search(name_filter, name)):
            continue
        write_testcase(by_name[name], data_dir / name)
        tests.append(NodeTest(name, operator, data_dir / name))
    return tests, failed_generators


# ---------------------------------------------------------------------------
# Selecting and preparing one test


def type_name(value_info) -> str:
    """'float32', 'int64', 'bool', ... for a tensor; else the kind of value ('sequence', ...)."""
    from onnx import TensorProto

    value_type = value_info.type
    if not value_type.HasField("tensor_type"):
        kind = value_type.WhichOneof("value")
        return kind.removesuffix("_type") if kind else "untyped"
    elem_type = value_type.tensor_type.elem_type
    if elem_type == TensorProto.FLOAT:
        return "float32"
    return TensorProto.DataType.Name(elem_type).lower()


def skip_reason(model, claimed: set[str]) -> str:
    """Why a test is not run, or '' when it is."""
    graph = model.graph
    if not graph.input:
        return "no graph input to feed"
    for index, info in enumerate(graph.input):
        allowed = ("float32",) if index == 0 else ("float32", "int64")
        if type_name(info) not in allowed:
            return f"not float32: input {index} '{info.name}' is {type_name(info)}"
    for index, info in enumerate(graph.output):
        if type_name(info) != "float32":
            return f"not float32: output {index} '{info.name}' is {type_name(info)}"
    unclaimed = sorted({node.op_type for node in graph.node} - claimed)
    if unclaimed:
        return f"uses operators not claimed: {', '.join(unclaimed)}"
    return ""


def read_tensors(data_set: Path, prefix: str, count: int) -> list[np.ndarray]:
    """test_data_set_0/<prefix>_0.pb ... as arrays."""
    from onnx import TensorProto, numpy_helper

    arrays = []
    for j in range(count):
        tensor = TensorProto()
        tensor.ParseFromString((data_set / f"{prefix}_{j}.pb").read_bytes())
        arrays.append(numpy_helper.to_array(tensor))
    return arrays


def with_inputs_as_initializers(model, inputs: Sequence[np.ndarray]):
    """The model with graph inputs 1.. turned into initializers holding `inputs`."""
    from onnx import numpy_helper

    graph = model.graph
    for info, value in zip(graph.input[1:], inputs[1:]):
        graph.initializer.append(numpy_helper.from_array(value, info.name))
    kept = graph.input[0]
    del graph.input[:]
    graph.input.append(kept)
    # IR < 4 wants every initializer listed as a graph input too.
    model.ir_version = max(model.ir_version, 4)
    return model


# ---------------------------------------------------------------------------
# Running tunefleet


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def error_message(command: str, returncode: int, stderr: str, stdout: str) -> str:
    """The first line of tunefleet's error ('tunefleet <command>: ...'), or what is known."""
    prefix = f"tunefleet {command}: "
    for line in stderr.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    if returncode < 0:
        crash = f"killed by {signal.Signals(-returncode).name}"
        detail = first_line(stderr)
        return f"{crash}: {detail}" if detail else crash
    return first_line(stderr) or first_line(stdout) or f"exit status {returncode}"


def run_command(argv: Sequence[str], timeout: float, log: Path) -> CommandOutcome:
    """Runs argv, logging its output; on timeout kills its whole process group."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               errors="replace", start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        log.write_text(f"$ {' '.join(argv)}\n{stdout}{stderr}timeout after {timeout:g} s\n")
        return CommandOutcome(False, "timeout")
    log.write_text(f"$ {' '.join(argv)}\n{stdout}{stderr}exit status {process.returncode}\n")
    if process.returncode == 0:
        return CommandOutcome(True)
    return CommandOutcome(False, error_message(argv[1], process.returncode, stderr, stdout))


def compare(got: np.ndarray, want: np.ndarray) -> tuple[bool, float | None, str]:
    """(within tolerance, max abs error, what differs) of the output against the expected."""
    if got.shape != want.shape:
        return False, None, f"output shape {list(got.shape)}, expected {list(want.shape)}"
    if want.size == 0:
        return True, 0.0, ""
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        error = np.abs(got64 - want64)
    same = (got64 == want64) | (np.isnan(got64) & np.isnan(want64))  # equal infinities, NaNs
    error = np.nan_to_num(np.where(same, 0.0, error), nan=np.inf)
    excess = error - (ATOL + RTOL * np.abs(np.nan_to_num(want64)))
    max_error = float(error.max())
    if excess.max() <= 0:
        return True, max_error, ""
    worst = np.unravel_index(int(np.argmax(excess)), want.shape)
    return False, max_error, (f"max abs error {max_error:.3g}; at {list(map(int, worst))} "
                              f"got {got64[worst]:.6g}, expected {want64[worst]:.6g}")


@dataclasses.dataclass
class Runner:
    tunefleet: str
    claimed: set[str]
    run_root: Path
    timeout: float

    def run(self, test: NodeTest) -> Result:
        try:
            return self._run(test)
        except Exception as error:  # a harness-side failure must not hide the other tests
            return Result(test.name, test.operator, "run_failed",
                          f"harness error: {type(error).__name__}: {error}")

    def _run(self, test: NodeTest) -> Result:
        import onnx

        model = onnx.load(str(test.directory / "model.onnx"))
        reason = skip_reason(model, self.claimed)
        if reason:
            return Result(test.name, test.operator, "skipped", reason)
        data_set = test.directory / "test_data_set_0"
        inputs = read_tensors(data_set, "input", len(model.graph.input))
        expected = read_tensors(data_set, "output", len(model.graph.output))

        work = self.run_root / test.name
        work.mkdir(parents=True, exist_ok=True)
        onnx.save(with_inputs_as_initializers(model, inputs), str(work / "model.onnx"))
        np.save(work / "x.npy", inputs[0].astype(np.float32))

        compiled = run_command([self.tunefleet, "compile", "--model", str(work / "model.onnx"),
                                "-o", str(work / "out")], self.timeout, work / "compile.log")
        if not compiled.ok:
            return Result(test.name, test.operator, "refused", compiled.message)
        outputs = [work / f"y{j}.npy" for j in range(len(expected))]
        ran = run_command([self.tunefleet, "run", "--model", str(work / "out"), "--input",
                           str(work / "x.npy"), "--output", ",".join(map(str, outputs)),
                           "--runs", "1"], self.timeout, work / "run.log")
        if not ran.ok:
            return Result(test.name, test.operator, "run_failed", ran.message)
        ok, max_error, difference, note = True, 0.0, "", ""
        for j, path in enumerate(outputs):
            if not path.exists():
                return Result(test.name, test.operator, "run_failed", f"run wrote no {path.name}")
            same, error, what = compare(np.load(path), expected[j])
            max_error = max(max_error, error if error is not None else float("inf"))
            if not same and ok:
                ok, difference = False, f"output {j}: {what}" if len(outputs) > 1 else what
        return Result(test.name, test.operator, "pass" if ok else "wrong", difference,
                      max_error, note)


def claimed_operators(tunefleet: str, ops_flag: str | None, timeout: float) -> set[str]:
    """--ops if given, else the first word of each line of `tunefleet operators`."""
    if ops_flag:
        return {op.strip() for op in ops_flag.split(",") if op.strip()}
    hint = "; name the claimed operators with --ops Conv,Relu,..."
    try:
        listed = subprocess.run([tunefleet, "operators"], capture_output=True, text=True,
                                timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SetupError(f"`{tunefleet} operators` could not run ({error}){hint}") from error
    if listed.returncode != 0:
        why = first_line(listed.stderr) or f"exit status {listed.returncode}"
        raise SetupError(f"`{tunefleet} operators` failed ({why}){hint}")
    operators = {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    if not operators:
        raise SetupError(f"`{tunefleet} operators` listed no operators{hint}")
    return operators


# ---------------------------------------------------------------------------
# Reporting


def pass_rate(counts: dict[str, int]) -> float | None:
    ran = counts["tests"] - counts["skipped"]
    return counts["pass"] / ran if ran else None


def tally(results: Iterable[Result]) -> dict[str, int]:
    counts = dict.fromkeys(("tests",) + STATUSES, 0)
    for result in results:
        counts["tests"] += 1
        counts[result.status] += 1
    return counts


def summarize(results: Sequence[Result]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """({operator: counts}, total counts)."""
    operators = sorted({r.operator for r in results})
    per_operator = {op: tally(r for r in results if r.operator == op) for op in operators}
    return per_operator, tally(results)


def format_rate(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def print_report(results: Sequence[Result], claimed: set[str], failed_generators: dict[str, str],
                 filtered: bool) -> None:
    per_operator, totals = summarize(results)
    columns = ("tests",) + STATUSES
    width = max([len("operator"), len("total")] + [len(op) for op in per_operator])
    print(f"{'operator':<{width}}  " + "  ".join(f"{c:>10}" for c in columns) + "   pass rate")
    for label, counts in list(per_operator.items()) + [("total", totals)]:
        if label == "total":
            print("-" * (width + 12 * len(columns) + 12))
        cells = "  ".join(f"{counts[c]:>10}" for c in columns)
        print(f"{label:<{width}}  {cells}  {format_rate(pass_rate(counts)):>10}")

    untested = sorted(claimed - set(per_operator))
    if untested and not filtered:
        print(f"\nclaimed operators with no node test: {', '.join(untested)}")
    not_passing = [r for r in results if r.status != "pass"]
    if not_passing:
        print("\nnot passing:")
        for r in sorted(not_passing, key=lambda r: (STATUSES.index(r.status), r.operator, r.test)):
            print(f"  {r.status:<10}  {r.test} ({r.operator}): {r.reason}")
    noted = [r for r in results if r.note]
    if noted:
        print("\nnotes:")
        for r in noted:
            print(f"  {r.test} ({r.status}): {r.note}")
    if failed_generators:
        print("\nONNX test generators that failed (their tests are missing):")
        for module, error in sorted(failed_generators.items()):
            print(f"  {module}: {error}")


def write_json(path: Path, results: Sequence[Result], claimed: set[str],
               failed_generators: dict[str, str], tunefleet: str) -> None:
    per_operator, totals = summarize(results)
    for counts in list(per_operator.values()) + [totals]:
        counts["pass_rate"] = pass_rate(counts)
    document = {
        "tunefleet": tunefleet,
        "claimed_operators": sorted(claimed),
        "tolerance": {"atol": ATOL, "rtol": RTOL},
        "per_operator": per_operator,
        "totals": totals,
        "tests": [dataclasses.asdict(r) for r in results],
        "failed_generators": failed_generators,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def failures(results: Sequence[Result], min_pass_rate: float) -> list[str]:
    """Why the run fails (empty when it passes)."""
    _, totals = summarize(results)
    why = [f"{totals[s]} {s}" for s in FAILING_STATUSES if totals[s]]
    rate = pass_rate(totals)
    if min_pass_rate > 0 and (rate is None or rate < min_pass_rate):
        why.append(f"pass rate {format_rate(rate)} < --min_pass_rate {100 * min_pass_rate:g}%")
    return why


# ---------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Runs ONNX's float32 backend node tests through tunefleet compile and run.")
    parser.add_argument("--tunefleet", default="./bazel-bin/cli/tunefleet",
                        help="the tunefleet binary (default: %(default)s)")
    parser.add_argument("--ops", help="claimed operators, comma-separated (overrides "
                        "`tunefleet operators`)")
    parser.add_argument("--filter", help="only tests whose name matches this regex (re.search)")
    parser.add_argument("--work_dir", type=Path,
                        help="where tests are generated, compiled and run (default: a "
                        "temporary directory, removed at the end unless --keep)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--min_pass_rate", type=float, default=0.0,
                        help="fail below this pass rate of the tests not skipped, 0..1 "
                        "(default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=1, help="tests at once (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds per compile or run (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if not 0 <= args.min_pass_rate <= 1:
        parser.error("--min_pass_rate is a fraction, 0 to 1")
    if args.filter:
        try:
            re.compile(args.filter)
        except re.error as error:
            parser.error(f"--filter: {error}")
    return args


def check_tunefleet(path: str) -> str:
    """The binary's absolute path (the symlink kept, for Bazel's runfiles)."""
    absolute = os.path.abspath(path)
    if not (os.path.isfile(absolute) and os.access(absolute, os.X_OK)):
        raise SetupError(f"no tunefleet binary at {absolute}: build it (bazel build "
                         "//cli:tunefleet) or pass --tunefleet PATH")
    return absolute


def make_work_dir(requested: Path | None) -> tuple[Path, bool]:
    """(work directory, whether the harness created it and may remove it)."""
    if requested is None:
        return Path(tempfile.mkdtemp(prefix="onnx_node_tests_")), True
    work_dir = requested.resolve()
    if work_dir == REPOSITORY or REPOSITORY in work_dir.parents:
        raise SetupError(f"--work_dir {work_dir} is inside the repository; pick one outside it")
    work_dir.mkdir(parents=True, exist_ok=True)
    return work_dir, False


def run_tests(tests: Sequence[NodeTest], runner: Runner, jobs: int) -> list[Result]:
    """Runs the tests, jobs at a time, printing progress to stderr; results in test order."""
    results: dict[str, Result] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(runner.run, test): test for test in tests}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            result = future.result()
            results[result.test] = result
            detail = f": {result.reason}" if result.reason else ""
            print(f"[{done}/{len(tests)}] {result.test}: {result.status}{detail}",
                  file=sys.stderr, flush=True)
    return [results[test.name] for test in tests]


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        tunefleet = check_tunefleet(args.tunefleet)
        claimed = claimed_operators(tunefleet, args.ops, args.timeout)
        work_dir, created = make_work_dir(args.work_dir)
    except SetupError as error:
        print(f"onnx_node_tests: {error}", file=sys.stderr)
        return 2
    try:
        tests, failed_generators = generate_tests(work_dir / "data", claimed, args.filter)
        print(f"{len(tests)} node tests of {len(claimed)} claimed operators in {work_dir}",
              file=sys.stderr)
        runner = Runner(tunefleet, claimed, work_dir / "runs", args.timeout)
        results = run_tests(tests, runner, args.jobs)
    finally:
        if created and not args.keep:
            shutil.rmtree(work_dir, ignore_errors=True)
        elif created:
            print(f"kept {work_dir}", file=sys.stderr)

    print_report(results, claimed, failed_generators, filtered=bool(args.filter))
    if args.json:
        write_json(args.json, results, claimed, failed_generators, tunefleet)
    why = failures(results, args.min_pass_rate)
    print(f"\n{'FAIL: ' + ', '.join(why) if why else 'OK'}")
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
