#include "local/build_ahead.h"

#include <algorithm>
#include <utility>

#include "kernel_runtime/thread_pool.h"

namespace tunefleet {

std::vector<int> FreeCpus(int measure_threads) {
  if (measure_threads <= 0) return {};
  const std::vector<int> cpus = AllowedCpus();
  if (static_cast<size_t>(measure_threads) >= cpus.size()) return {};
  return std::vector<int>(cpus.begin() + measure_threads, cpus.end());
}

BuildAhead::BuildAhead(std::vector<BuildJob> jobs, const BuildOptions& options,
                       const std::vector<int>& cpus, ClockInterface& clock)
    : jobs_(std::move(jobs)), options_(options), results_(jobs_.size()), watch_(clock) {
  const size_t threads = std::min(cpus.size(), jobs_.size());
  for (size_t t = 0; t < threads; ++t) {
    const int cpu = cpus[t];
    threads_.emplace_back([this, cpu] {
      // Unpinned builds still build; they may only share a core.
      if (cpu != kAnyCpu) (void)PinThisThreadTo(cpu);
      Work();
    });
  }
}

BuildAhead::~BuildAhead() {
  for (std::thread& t : threads_) t.join();
}

void BuildAhead::Work() {
  for (size_t i = next_.fetch_add(1); i < jobs_.size(); i = next_.fetch_add(1)) {
    const BuildJob& job = jobs_[i];
    if (job.target == nullptr) {
      results_[i].error_no = MeasureErrorNo::kCompileHost;
      results_[i].error_msg = "no target to build for";
      continue;
    }
    results_[i] =
        BuildCandidate(job.task->tmpl(), job.task->workload(), job.config, *job.target, options_);
    const double done = watch_.ElapsedSeconds();
    double seen = last_done_seconds_.load();
    while (done > seen && !last_done_seconds_.compare_exchange_weak(seen, done)) {
    }
  }
}

std::vector<BuildResult> BuildAhead::Take() {
  Work();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  wall_seconds_ = last_done_seconds_.load();
  return std::move(results_);
}

}  // namespace tunefleet
