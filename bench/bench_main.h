// The main() of the flag-driven benchmarks (bench_main.cc): it parses the
// command line's absl flags, then returns what the benchmark's BenchMain()
// returns as the exit status.
//
//   namespace tunefleet::bench {
//   int BenchMain() { ...; return 0; }
//   }
#ifndef TUNEFLEET_BENCH_BENCH_MAIN_H_
#define TUNEFLEET_BENCH_BENCH_MAIN_H_

namespace tunefleet::bench {

// Defined by each benchmark that links //bench:bench_main.
int BenchMain();

}  // namespace tunefleet::bench

#endif  // TUNEFLEET_BENCH_BENCH_MAIN_H_
