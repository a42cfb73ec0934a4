#include "bench/bench_main.h"

#include "absl/flags/parse.h"

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tunefleet::bench::BenchMain();
}
