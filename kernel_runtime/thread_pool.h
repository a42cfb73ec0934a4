// A persistent thread pool that implements the kernel ABI's TfRuntime
// (common/kernel_abi.h): compiled kernels own no threads and call
// runtime->parallel_for for every parallel loop.
//
// Use one ThreadPool per measuring process and keep it for the process's
// life: kernels of a few tens of microseconds are timed thousands of times,
// so dispatch must cost about a microsecond, which rules out creating threads
// or even waking sleeping ones on every call.
//
//   ThreadPool pool(ThreadPoolOptions{.num_threads = 2});
//   pool.PinCallingThread();
//   int32_t rc = entry(args, pool.runtime());
//
// Design:
//  - ParallelFor(n, body, closure) splits [0, n) into min(n, num_threads)
//    contiguous chunks of near-equal size; chunk 0 runs on the calling
//    thread, chunk t on worker t, each from its front in batches of about
//    a sixteenth. The partition depends only on n and num_threads, so a
//    kernel does most of its work on the same core every run (stable
//    caches). A thread done with its chunk takes the batches another has
//    not begun: equal chunks are not equal work (a convolution's border
//    rows, one core slower than the other on a shared host), and without
//    it the first done waited at every loop's end (14 % of the calling
//    thread's time in a compiled EfficientNet-B0 on 2 cores).
//  - Idle workers spin on a generation counter for `spin_nanos` (about
//    100 us) before blocking on a condition variable, so back-to-back calls
//    never pay a futex wake-up, while a pool left idle costs no CPU.
//  - A ParallelFor issued from inside a body (nested parallelism) runs
//    serially on the thread that issued it: the outer loop already uses
//    every thread.
//  - Calls from different threads are serialised: one parallel loop at a
//    time.
#ifndef TUNEFLEET_KERNEL_RUNTIME_THREAD_POOL_H_
#define TUNEFLEET_KERNEL_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/kernel_abi.h"

namespace tunefleet {

// The CPUs this process may run on (its affinity mask, e.g. under taskset or a
// cpuset), ascending; empty when the mask cannot be read.
std::vector<int> AllowedCpus();
// Pins the calling thread to `cpu`; false when the system refuses.
bool PinThisThreadTo(int cpu);

struct ThreadPoolOptions {
  // Threads that run parallel loops, counting the calling thread (so 1 means
  // no worker threads). Values < 1 are treated as 1.
  int num_threads = 1;
  // Pin worker t to the t-th CPU this process may run on (and, through
  // PinCallingThread, the caller to the 0th). Applied only when num_threads
  // does not exceed the number of such CPUs; oversubscribed pinned threads
  // would queue behind each other.
  bool pin_threads = true;
  // How long idle threads busy-wait before blocking.
  int64_t spin_nanos = 100'000;
};

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  explicit ThreadPool(const ThreadPoolOptions& options);
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The ABI view of this pool, valid for the pool's lifetime.
  const TfRuntime* runtime() const { return &runtime_; }
  int num_threads() const { return num_threads_; }
  // Whether workers were pinned to CPUs.
  bool pinned() const { return pin_cpus_.size() > 0; }

  // Runs body(i, closure) for every i in [0, n) and returns when all are
  // done. See the header comment for how work is split.
  void ParallelFor(int64_t n, TfParallelBody body, void* closure);

  // Pins the calling thread to the CPU that no worker uses, for the thread
  // that will issue ParallelFor. Returns false when pinning is off (see
  // ThreadPoolOptions::pin_threads) or the kernel refused.
  bool PinCallingThread();

  // 64-byte aligned scratch memory for kernels (packed operands, padded
  // inputs). Returns nullptr for bytes < 0 or when memory is exhausted; never
  // for 0 bytes. Freed blocks are kept and handed out again to requests of
  // the same size (TVM's WorkspacePool does the same), so a kernel that
  // allocates its workspace on every call does not pay fresh pages (mmap,
  // page faults, zeroing) on every call. A compiled model's kernels cycle
  // through all their sizes once per inference (padded inputs, Winograd's
  // two buffers per shape, gathered strided inputs), and a least-recently-
  // freed cache that holds fewer sizes than the cycle misses on every one,
  // so free blocks are kept while there are at most kMaxCachedWorkspaces of
  // them holding at most kMaxCachedWorkspaceBytes; the least recently freed
  // go first, and all are released with the pool.
  void* AllocWorkspace(int64_t bytes);
  void FreeWorkspace(void* ptr);
  // The bytes of the freed blocks kept for reuse.
  int64_t CachedWorkspaceBytes();
  static constexpr int kMaxCachedWorkspaces = 128;
  static constexpr int64_t kMaxCachedWorkspaceBytes = int64_t{512} << 20;

 private:
  void WorkerLoop(int worker_index);
  // Returns the first generation different from `seen`: spins, then blocks.
  uint64_t WaitForNewGeneration(uint64_t seen);
  // Blocks the dispatching thread until every worker acknowledged the
  // current generation.
  void WaitForWorkers();
  // The thread's own chunk (none where chunk_index >= job_chunks_), then
  // what is left of the others, in turn from the next.
  void RunChunk(int chunk_index);
  // Claims and runs batches of chunk `chunk` until none is left.
  void RunBatchesOf(int chunk);

  static void ParallelForTrampoline(void* context, int64_t n, TfParallelBody body, void* closure);
  static void* AllocWorkspaceTrampoline(void* context, int64_t bytes);
  static void FreeWorkspaceTrampoline(void* context, void* ptr);

  const int num_threads_;
  const int64_t spin_nanos_;
  // CPU ids for thread t (index 0: the caller); empty when not pinning.
  std::vector<int> pin_cpus_;
  TfRuntime runtime_;

  // Held for the whole of one parallel loop; serialises dispatching threads.
  absl::Mutex dispatch_mu_;

  struct Workspace {
    void* ptr;
    int64_t bytes;
  };
  absl::Mutex workspace_mu_;
  std::vector<Workspace> free_workspaces_ ABSL_GUARDED_BY(workspace_mu_);
  std::vector<Workspace> used_workspaces_ ABSL_GUARDED_BY(workspace_mu_);
  int64_t cached_workspace_bytes_ ABSL_GUARDED_BY(workspace_mu_) = 0;  // in free_workspaces_

  // The current job. Written by the dispatching thread (holding
  // dispatch_mu_) before it publishes a new generation with a release
  // store; read by workers after they observe that generation with an
  // acquire load, and never rewritten before every worker has acknowledged
  // it through pending_workers_. Hence plain fields, no lock.
  TfParallelBody job_body_ = nullptr;
  void* job_closure_ = nullptr;
  int job_chunks_ = 0;
  // Chunk c's next unclaimed index (claimed by fetch_add of its batch, by
  // its owner or a thread done with its own), its end and its batch; one
  // cache line each, num_threads_ of them. Set with the job fields.
  struct alignas(64) ChunkCursor {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
    int64_t batch = 1;
  };
  std::unique_ptr<ChunkCursor[]> cursors_;

  // Bumped once per parallel loop (and once more to stop the pool).
  alignas(64) std::atomic<uint64_t> generation_{0};
  // Workers that have not yet finished the current generation.
  alignas(64) std::atomic<int> pending_workers_{0};
  // Sleep/wake handshakes: a side about to block announces it in one of
  // these (seq_cst) before re-checking its condition under wake_mu_, and the
  // other side signals only when it sees the announcement. Either the
  // sleeper sees the new state or the waker sees the sleeper.
  alignas(64) std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> dispatcher_sleeping_{false};
  std::atomic<bool> stop_{false};

  absl::Mutex wake_mu_;
  absl::CondVar work_available_;  // workers wait here for a new generation
  absl::CondVar work_done_;       // the dispatcher waits here for workers

  std::vector<std::thread> workers_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_THREAD_POOL_H_
