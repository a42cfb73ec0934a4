// tunefleet_builder: dials the tracker and builds what it is sent.
//
//   tunefleet_builder --tracker=127.0.0.1:7070 --token_file=builder.token
//
// The flags (--parallelism, --cache_mb and the shared worker flags:
// --tracker, --token_file, --tls_*, --name, --drain_timeout_s,
// --metrics_listen) are in
// builder_worker/builder_flags.h and worker_stream/worker_flags.h.
#include "absl/flags/parse.h"
#include "builder_worker/builder_flags.h"
#include "common/daemon_util.h"

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  return tunefleet::RunBuilderFromFlags("tunefleet_builder", /*customize=*/nullptr);
}
