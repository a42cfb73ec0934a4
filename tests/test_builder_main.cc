// test_builder: the builder for integration tests and benchmarks only. The
// production builder (its flags and run loop: builder_worker/builder_flags.h)
// plus the test-only fault template dense_fault.test (linked in:
// tests/dense_fault_test_template.h) and two test flags:
//   --simulate_build_delay_ms  sleep this long before every build (so a test
//                              can kill a builder in the middle of one);
//   --simulate_build_ms        compile nothing: sleep, then answer a
//                              placeholder artifact (for //tests:fake_agent).
#include <optional>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "builder_worker/builder_flags.h"
#include "common/daemon_util.h"
#include "common/sha256.h"

ABSL_FLAG(double, simulate_build_delay_ms, 0, "sleep this long before every build");
ABSL_FLAG(double, simulate_build_ms, 0, "compile nothing: answer placeholders for fake agents");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  const double delay_s = absl::GetFlag(FLAGS_simulate_build_delay_ms) / 1000.0;
  const double simulate_s = absl::GetFlag(FLAGS_simulate_build_ms) / 1000.0;
  return tunefleet::RunBuilderFromFlags(
      "test_builder", [delay_s, simulate_s](tunefleet::BuilderDaemonOptions& options) {
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
      });
}
