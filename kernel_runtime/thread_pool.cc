#include "kernel_runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "common/check.h"
#include "common/clock.h"
#include "common/logging.h"
#include "target/host.h"

namespace tunefleet {
namespace {

// > 0 while this thread runs a parallel body (workers: always). A
// ParallelFor issued at depth > 0 runs serially.
thread_local int parallel_depth = 0;

// A chunk is claimed in about this many batches: a thread that finishes
// early waits at most about one batch of another's (a sixteenth of its
// chunk), for 16 atomic additions per chunk.
constexpr int64_t kBatchesPerChunk = 16;

// Busy-waits until done() or `spin_nanos` elapse; returns done()'s last value.
// Reads the clock only every 64 iterations: it is slower than the check.
template <typename Done>
bool SpinUntil(Done done, int64_t spin_nanos) {
  if (done()) return true;
  if (spin_nanos <= 0) return false;
  const int64_t deadline = SystemClock().NowNanos() + spin_nanos;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      CpuRelax();
      if (done()) return true;
    }
    if (SystemClock().NowNanos() >= deadline) return done();
  }
}

}  // namespace

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool PinThisThreadTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // 0: the calling thread (the sandbox lets a thread move only itself).
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

ThreadPool::ThreadPool(int num_threads)
    : ThreadPool(ThreadPoolOptions{.num_threads = num_threads}) {}

ThreadPool::ThreadPool(const ThreadPoolOptions& options)
    : num_threads_(std::max(1, options.num_threads)),
      spin_nanos_(options.spin_nanos),
      cursors_(std::make_unique<ChunkCursor[]>(num_threads_)) {
  if (options.pin_threads) {
    std::vector<int> cpus = AllowedCpus();
    if (static_cast<int>(cpus.size()) >= num_threads_) {
      pin_cpus_.assign(cpus.begin(), cpus.begin() + num_threads_);
    }
  }
  runtime_.abi_version = TF_KERNEL_ABI_VERSION;
  runtime_.num_threads = num_threads_;
  runtime_.context = this;
  runtime_.parallel_for = &ThreadPool::ParallelForTrampoline;
  runtime_.alloc_workspace = &ThreadPool::AllocWorkspaceTrampoline;
  runtime_.free_workspace = &ThreadPool::FreeWorkspaceTrampoline;

  workers_.reserve(num_threads_ - 1);
  for (int worker_index = 1; worker_index < num_threads_; ++worker_index) {
    workers_.emplace_back([this, worker_index] { WorkerLoop(worker_index); });
  }
}

ThreadPool::~ThreadPool() {
  {
    // Wait for any loop in flight; no new one can start on a dying pool.
    absl::MutexLock dispatch_lock(&dispatch_mu_);
    stop_.store(true, std::memory_order_seq_cst);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    absl::MutexLock wake_lock(&wake_mu_);
    work_available_.SignalAll();
  }
  for (std::thread& worker : workers_) worker.join();
  absl::MutexLock lock(&workspace_mu_);
  for (const Workspace& block : free_workspaces_) std::free(block.ptr);
  for (const Workspace& block : used_workspaces_) std::free(block.ptr);
}

bool ThreadPool::PinCallingThread() {
  if (pin_cpus_.empty()) return false;
  return PinThisThreadTo(pin_cpus_[0]);
}

void ThreadPool::ParallelFor(int64_t n, TfParallelBody body, void* closure) {
  if (n <= 0) return;
  if (n == 1 || num_threads_ == 1 || parallel_depth > 0) {
    ++parallel_depth;
    for (int64_t i = 0; i < n; ++i) body(i, closure);
    --parallel_depth;
    return;
  }

  absl::MutexLock dispatch_lock(&dispatch_mu_);
  job_body_ = body;
  job_closure_ = closure;
  job_chunks_ = static_cast<int>(std::min<int64_t>(n, num_threads_));
  // Near-equal contiguous chunks: the first n % chunks get one extra index.
  const int64_t base = n / job_chunks_, extra = n % job_chunks_;
  for (int c = 0; c < job_chunks_; ++c) {
    const int64_t begin = c * base + std::min<int64_t>(c, extra);
    const int64_t end = begin + base + (c < extra ? 1 : 0);
    cursors_[c].next.store(begin, std::memory_order_relaxed);
    cursors_[c].end = end;
    cursors_[c].batch = std::max<int64_t>(1, (end - begin) / kBatchesPerChunk);
  }
  // Every worker acknowledges every generation, even one with no chunk for
  // it: that is what makes rewriting the job fields above safe next time.
  pending_workers_.store(num_threads_ - 1, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_workers_.load(std::memory_order_seq_cst) > 0) {
    absl::MutexLock wake_lock(&wake_mu_);
    work_available_.SignalAll();
  }

  ++parallel_depth;
  RunChunk(0);
  --parallel_depth;
  WaitForWorkers();
}

void ThreadPool::RunChunk(int chunk_index) {
  for (int k = 0; k < job_chunks_; ++k) RunBatchesOf((chunk_index + k) % job_chunks_);
}

void ThreadPool::RunBatchesOf(int chunk) {
  ChunkCursor& cursor = cursors_[chunk];
  const int64_t end = cursor.end, batch = cursor.batch;
  TfParallelBody body = job_body_;
  void* closure = job_closure_;
  // Relaxed: what a batch's bodies write is published by the claimer's own
  // completion (pending_workers_), not by this counter.
  for (;;) {
    const int64_t first = cursor.next.fetch_add(batch, std::memory_order_relaxed);
    if (first >= end) return;
    const int64_t last = std::min(first + batch, end);
    for (int64_t i = first; i < last; ++i) body(i, closure);
  }
}

void ThreadPool::WaitForWorkers() {
  auto all_done = [this] { return pending_workers_.load(std::memory_order_acquire) == 0; };
  if (SpinUntil(all_done, spin_nanos_)) return;
  dispatcher_sleeping_.store(true, std::memory_order_seq_cst);
  {
    absl::MutexLock wake_lock(&wake_mu_);
    while (pending_workers_.load(std::memory_order_seq_cst) != 0) {
      work_done_.Wait(&wake_mu_);
    }
  }
  dispatcher_sleeping_.store(false, std::memory_order_relaxed);
}

uint64_t ThreadPool::WaitForNewGeneration(uint64_t seen) {
  uint64_t generation = seen;
  auto changed = [&] {
    generation = generation_.load(std::memory_order_acquire);
    return generation != seen;
  };
  if (SpinUntil(changed, spin_nanos_)) return generation;
  sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
  {
    absl::MutexLock wake_lock(&wake_mu_);
    while ((generation = generation_.load(std::memory_order_seq_cst)) == seen) {
      work_available_.Wait(&wake_mu_);
    }
  }
  sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
  return generation;
}

void ThreadPool::WorkerLoop(int worker_index) {
  if (!pin_cpus_.empty() && !PinThisThreadTo(pin_cpus_[worker_index])) {
    TF_LOG(WARNING) << "thread_pool: could not pin worker " << worker_index << " to cpu "
                    << pin_cpus_[worker_index];
  }
  parallel_depth = 1;  // bodies on workers never dispatch to the pool again
  uint64_t seen = 0;
  for (;;) {
    seen = WaitForNewGeneration(seen);
    if (stop_.load(std::memory_order_acquire)) return;
    RunChunk(worker_index);
    if (pending_workers_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        dispatcher_sleeping_.load(std::memory_order_seq_cst)) {
      absl::MutexLock wake_lock(&wake_mu_);
      work_done_.Signal();
    }
  }
}

void* ThreadPool::AllocWorkspace(int64_t bytes) {
  if (bytes < 0) return nullptr;
  if (bytes == 0) bytes = 64;
  absl::MutexLock lock(&workspace_mu_);
  for (size_t i = 0; i < free_workspaces_.size(); ++i) {
    if (free_workspaces_[i].bytes == bytes) {
      Workspace block = free_workspaces_[i];
      cached_workspace_bytes_ -= block.bytes;
      free_workspaces_.erase(free_workspaces_.begin() + i);
      used_workspaces_.push_back(block);
      return block.ptr;
    }
  }
  void* ptr = nullptr;
  // posix_memalign, unlike aligned_alloc, needs no size rounding.
  if (posix_memalign(&ptr, 64, static_cast<size_t>(bytes)) != 0) return nullptr;
  used_workspaces_.push_back({ptr, bytes});
  return ptr;
}

int64_t ThreadPool::CachedWorkspaceBytes() {
  absl::MutexLock lock(&workspace_mu_);
  return cached_workspace_bytes_;
}

void ThreadPool::FreeWorkspace(void* ptr) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&workspace_mu_);
  for (size_t i = 0; i < used_workspaces_.size(); ++i) {
    if (used_workspaces_[i].ptr != ptr) continue;
    free_workspaces_.push_back(used_workspaces_[i]);
    cached_workspace_bytes_ += used_workspaces_[i].bytes;
    used_workspaces_.erase(used_workspaces_.begin() + i);
    while (static_cast<int>(free_workspaces_.size()) > kMaxCachedWorkspaces ||
           (cached_workspace_bytes_ > kMaxCachedWorkspaceBytes && free_workspaces_.size() > 1)) {
      cached_workspace_bytes_ -= free_workspaces_.front().bytes;
      std::free(free_workspaces_.front().ptr);  // the least recently freed
      free_workspaces_.erase(free_workspaces_.begin());
    }
    return;
  }
  TF_CHECK(false && "FreeWorkspace of a pointer AllocWorkspace did not return");
}

void ThreadPool::ParallelForTrampoline(void* context, int64_t n, TfParallelBody body,
                                       void* closure) {
  TF_CHECK(context != nullptr);
  static_cast<ThreadPool*>(context)->ParallelFor(n, body, closure);
}

void* ThreadPool::AllocWorkspaceTrampoline(void* context, int64_t bytes) {
  TF_CHECK(context != nullptr);
  return static_cast<ThreadPool*>(context)->AllocWorkspace(bytes);
}

void ThreadPool::FreeWorkspaceTrampoline(void* context, void* ptr) {
  TF_CHECK(context != nullptr);
  static_cast<ThreadPool*>(context)->FreeWorkspace(ptr);
}

}  // namespace tunefleet
