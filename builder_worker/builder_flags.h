// The builder process's flags and run loop, shared by the production main
// (builder_main.cc) and the test builder (tests/test_builder_main.cc): the
// shared worker flags (worker_stream/worker_flags.h, --metrics_listen among them)
// plus --parallelism and --cache_mb. Link it into builder mains only (it defines the flags).
//
//   absl::ParseCommandLine(argc, argv);
//   BlockTerminationSignals();
//   return RunBuilderFromFlags("tunefleet_builder", /*customize=*/nullptr);
#ifndef TUNEFLEET_BUILDER_WORKER_BUILDER_FLAGS_H_
#define TUNEFLEET_BUILDER_WORKER_BUILDER_FLAGS_H_

#include <functional>
#include <string>

#include "builder_worker/builder_daemon.h"

namespace tunefleet {

// Reads the options from the flags (after absl::ParseCommandLine), lets
// `customize` (may be empty) adjust them, validates them, then runs a
// BuilderDaemon until SIGINT or SIGTERM (blocked beforehand with
// BlockTerminationSignals()) and stops it. Returns the exit code: 2 after
// printing "<program>: <problem>" to stderr when the options are bad, else 0.
int RunBuilderFromFlags(const std::string& program,
                        const std::function<void(BuilderDaemonOptions&)>& customize);

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_BUILDER_FLAGS_H_
