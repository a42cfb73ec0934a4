// Build-ahead in local mode: while the runner child measures one batch of
// candidates, the next batch is built on the CPUs the measurement leaves
// free (the child pins its kernel threads to the first CPUs this process
// may run on; kernel_runtime/thread_pool.h), one builder thread per free
// CPU, pinned there, so the compiler never shares a core with the kernel
// being timed. When the measurement ends first, the calling thread builds
// what no builder thread has started yet, then waits for the rest. It is
// also how LocalMeasurer builds a batch at once (unpinned threads, Take
// right away).
//
//   std::vector<int> cpus = FreeCpus(measure_threads);   // empty: no build-ahead
//   BuildAhead next(std::move(jobs), build_options, cpus);  // starts building
//   ... measure the current batch ...
//   std::vector<BuildResult> built = next.Take();         // in the jobs' order
#ifndef TUNEFLEET_LOCAL_BUILD_AHEAD_H_
#define TUNEFLEET_LOCAL_BUILD_AHEAD_H_

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "toolchain/builder.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// The CPUs this process may run on beyond the first `measure_threads`
// (those the runner child's kernel threads are pinned to): where builds
// can run beside a measurement. Empty when none is free, and for
// `measure_threads` <= 0 (the child takes every CPU).
std::vector<int> FreeCpus(int measure_threads);

// One candidate to build: its task, the task's target and the config. The
// task and target must outlive the BuildAhead; a null target is a
// COMPILE_HOST failure.
struct BuildJob {
  const Task* task = nullptr;
  const TargetSpec* target = nullptr;
  Config config;
};

class BuildAhead {
 public:
  // A CPU entry of `cpus` for a builder thread left unpinned.
  static constexpr int kAnyCpu = -1;

  // Starts building `jobs` with `options`, one thread per CPU of `cpus`
  // (each pinned to its CPU unless it is kAnyCpu; at most one thread per
  // job). With no CPUs, nothing is built until Take. `clock` times the
  // builds; it must outlive this.
  BuildAhead(std::vector<BuildJob> jobs, const BuildOptions& options, const std::vector<int>& cpus,
             ClockInterface& clock = SystemClock());
  // Waits for the builder threads.
  ~BuildAhead();
  BuildAhead(const BuildAhead&) = delete;
  BuildAhead& operator=(const BuildAhead&) = delete;

  // The builds, in the jobs' order: builds on the calling thread what no
  // builder thread has started, then waits for the rest. Once only.
  std::vector<BuildResult> Take();
  // Seconds from the start until the last build was done (the builds' wall
  // time, overlapped with whatever ran meanwhile); valid after Take.
  double wall_seconds() const { return wall_seconds_; }

 private:
  void Work();

  const std::vector<BuildJob> jobs_;
  const BuildOptions options_;
  std::vector<BuildResult> results_;
  std::atomic<size_t> next_{0};
  std::vector<std::thread> threads_;
  Stopwatch watch_;
  std::atomic<double> last_done_seconds_{0};
  double wall_seconds_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_BUILD_AHEAD_H_
