// test_builder: the builder for integration tests and benchmarks only. The
// production builder (builder_worker/builder_main.cc) plus the test-only
// fault template dense_fault.test (linked in: tests/dense_fault_test_template.h)
// and two test flags:
//   --simulate_build_delay_ms  sleep this long before every build (so a test
//                              can kill a builder in the middle of one);
//   --simulate_build_ms        compile nothing: sleep, then answer a
//                              placeholder artifact (for //tests:fake_agent).
#include <cstdint>
#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "builder_worker/builder_daemon.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "common/sha256.h"
#include "worker/worker_flags.h"

ABSL_FLAG(int, parallelism, 0, "builds at once (0 = all cores)");
ABSL_FLAG(int64_t, cache_mb, 256, "artifact cache size in MiB");
ABSL_FLAG(double, simulate_build_delay_ms, 0, "sleep this long before every build");
ABSL_FLAG(double, simulate_build_ms, 0, "compile nothing: answer placeholders for fake agents");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  tunefleet::BuilderDaemonOptions options;
  absl::StatusOr<tunefleet::WorkerDaemonOptions> worker =
      tunefleet::WorkerDaemonOptionsFromFlags("builder");
  if (!worker.ok()) {
    std::cerr << "test_builder: " << worker.status().message() << "\n";
    return 2;
  }
  options.worker = *std::move(worker);
  options.service.parallelism = absl::GetFlag(FLAGS_parallelism);
  options.service.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  const double delay_s = absl::GetFlag(FLAGS_simulate_build_delay_ms) / 1000.0;
  const double simulate_s = absl::GetFlag(FLAGS_simulate_build_ms) / 1000.0;
  options.service.before_build = [delay_s,
                                  simulate_s](const tunefleet::proto::BuildRequest& request)
      -> std::optional<tunefleet::proto::BuildResult> {
    if (delay_s > 0) absl::SleepFor(absl::Seconds(delay_s));
    if (simulate_s <= 0) return std::nullopt;
    // A placeholder artifact that only fake agents accept.
    absl::SleepFor(absl::Seconds(simulate_s));
    tunefleet::proto::BuildResult result;
    result.set_entry_name("simulated");
    result.set_shared_object(
        absl::StrCat("SIMULATED ", request.job_id(), " ", request.config_json()));
    result.set_artifact_hash(tunefleet::Sha256Hex(result.shared_object()));
    return result;
  };
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::cerr << "test_builder: " << valid.message() << "\n";
    return 2;
  }

  tunefleet::BuilderDaemon daemon(options);
  daemon.Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": draining and stopping builder " << options.worker.name;
  daemon.Stop();
  return 0;
}
