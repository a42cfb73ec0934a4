#include "kernel_runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// Closure for the counting bodies below: hits[i] counts runs of index i and
// thread_ids[i] records which thread ran it.
struct CountingClosure {
  std::vector<std::atomic<int>> hits;
  std::vector<std::thread::id> thread_ids;
  explicit CountingClosure(int64_t n) : hits(n), thread_ids(n) {}
};

void CountBody(int64_t i, void* closure) {
  auto* c = static_cast<CountingClosure*>(closure);
  c->hits[i].fetch_add(1);
  c->thread_ids[i] = std::this_thread::get_id();
}

void ExpectEachIndexOnce(const CountingClosure& c) {
  for (size_t i = 0; i < c.hits.size(); ++i) {
    EXPECT_EQ(c.hits[i].load(), 1) << "index " << i;
  }
}

TEST(ThreadPoolTest, RuntimeDescribesThePool) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .pin_threads = false});
  const TfRuntime* rt = pool.runtime();
  EXPECT_EQ(rt->abi_version, TF_KERNEL_ABI_VERSION);
  EXPECT_EQ(rt->num_threads, 3);
  EXPECT_EQ(rt->context, &pool);
  EXPECT_NE(rt->parallel_for, nullptr);
  EXPECT_NE(rt->alloc_workspace, nullptr);
  EXPECT_NE(rt->free_workspace, nullptr);
}

TEST(ThreadPoolTest, SumsThroughTheAbi) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4, .pin_threads = false});
  constexpr int64_t kN = 10007;
  std::vector<int64_t> values(kN);
  struct Closure {
    std::vector<int64_t>* values;
  } closure{&values};
  const TfRuntime* rt = pool.runtime();
  rt->parallel_for(
      rt->context, kN, [](int64_t i, void* c) { (*static_cast<Closure*>(c)->values)[i] = i * i; },
      &closure);
  int64_t sum = 0;
  for (int64_t v : values) sum += v;
  EXPECT_EQ(sum, (kN - 1) * kN * (2 * kN - 1) / 6);
}

// Spins until pred() or 10 s pass; returns pred()'s last value. A body that
// waits on another index with it fails instead of hanging where the pool
// never runs that index beside it.
template <typename Pred>
bool WaitUntil(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Bodies that record their thread and, at `heads`, wait until every head
// has started: only a pool whose threads each run a head at once gets past.
struct HeadsClosure : CountingClosure {
  std::vector<int64_t> heads;
  std::atomic<int> heads_started{0};
  std::atomic<bool> timed_out{false};
  HeadsClosure(int64_t n, std::vector<int64_t> h) : CountingClosure(n), heads(std::move(h)) {}
};

void HeadsBody(int64_t i, void* closure) {
  auto* c = static_cast<HeadsClosure*>(closure);
  CountBody(i, c);
  if (std::find(c->heads.begin(), c->heads.end(), i) == c->heads.end()) return;
  c->heads_started.fetch_add(1);
  const int want = static_cast<int>(c->heads.size());
  if (!WaitUntil([&] { return c->heads_started.load() == want; })) c->timed_out = true;
}

TEST(ThreadPoolTest, EachThreadStartsAtTheFrontOfItsChunk) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .pin_threads = false});
  HeadsClosure c(10, {0, 4, 7});  // chunks of 4, 3, 3
  pool.ParallelFor(10, HeadsBody, &c);
  ExpectEachIndexOnce(c);
  EXPECT_FALSE(c.timed_out) << "the chunks' first indices did not run at once";
  // Chunk 0 starts on the calling thread, the others on two workers.
  EXPECT_EQ(c.thread_ids[0], std::this_thread::get_id());
  EXPECT_NE(c.thread_ids[4], std::this_thread::get_id());
  EXPECT_NE(c.thread_ids[7], std::this_thread::get_id());
  EXPECT_NE(c.thread_ids[4], c.thread_ids[7]);
}

// The index at the front of the worker's chunk waits until the last index
// of that chunk has run: the thread that finished its own chunk must take
// it (with one fixed chunk per thread this never ends).
TEST(ThreadPoolTest, AThreadDoneWithItsChunkTakesWhatAnotherHasNotBegun) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_threads = false});
  constexpr int64_t kN = 64;
  struct Closure {
    CountingClosure counts{kN};
    std::atomic<bool> last_done{false};
    std::atomic<bool> timed_out{false};
  } c;
  pool.ParallelFor(
      kN,
      [](int64_t i, void* closure) {
        auto* c = static_cast<Closure*>(closure);
        CountBody(i, &c->counts);
        if (i == kN / 2 && !WaitUntil([&] { return c->last_done.load(); })) c->timed_out = true;
        if (i == kN - 1) c->last_done = true;
      },
      &c);
  ExpectEachIndexOnce(c.counts);
  EXPECT_FALSE(c.timed_out) << "the rest of a blocked thread's chunk never ran";
}

TEST(ThreadPoolTest, FewerIndicesThanThreads) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 4, .pin_threads = false});
  for (int64_t n = 1; n <= 3; ++n) {
    CountingClosure c(n);
    pool.ParallelFor(n, CountBody, &c);
    ExpectEachIndexOnce(c);
  }
}

TEST(ThreadPoolTest, ZeroAndNegativeCountsRunNothing) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_threads = false});
  pool.ParallelFor(0, [](int64_t, void*) { FAIL() << "body ran for n = 0"; }, nullptr);
  pool.ParallelFor(-5, [](int64_t, void*) { FAIL() << "body ran for n < 0"; }, nullptr);
}

TEST(ThreadPoolTest, NestedParallelForRunsSeriallyOnTheSameThread) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .pin_threads = false});
  constexpr int kOuter = 6, kInner = 5;
  struct Closure {
    ThreadPool* pool;
    std::atomic<int> inner_hits[kOuter][kInner];
    std::atomic<int> inner_on_other_thread{0};
  } closure{&pool, {}, {}};
  struct InnerClosure {
    Closure* outer;
    int64_t row;
    std::thread::id thread;
  };
  pool.ParallelFor(
      kOuter,
      [](int64_t row, void* c) {
        auto* outer = static_cast<Closure*>(c);
        InnerClosure inner{outer, row, std::this_thread::get_id()};
        const TfRuntime* rt = outer->pool->runtime();
        rt->parallel_for(
            rt->context, kInner,
            [](int64_t col, void* ic) {
              auto* in = static_cast<InnerClosure*>(ic);
              in->outer->inner_hits[in->row][col].fetch_add(1);
              if (std::this_thread::get_id() != in->thread) in->outer->inner_on_other_thread++;
            },
            &inner);
      },
      &closure);
  for (int r = 0; r < kOuter; ++r) {
    for (int c = 0; c < kInner; ++c) EXPECT_EQ(closure.inner_hits[r][c].load(), 1);
  }
  EXPECT_EQ(closure.inner_on_other_thread.load(), 0);
}

TEST(ThreadPoolTest, ManyRepeatedCallsAllComplete) {
  // Short spin so that both the spinning and the sleeping hand-offs happen.
  ThreadPool pool(ThreadPoolOptions{.num_threads = 3, .pin_threads = false, .spin_nanos = 2000});
  std::atomic<int64_t> total{0};
  for (int call = 0; call < 20000; ++call) {
    pool.ParallelFor(
        7, [](int64_t i, void* c) { static_cast<std::atomic<int64_t>*>(c)->fetch_add(i + 1); },
        &total);
  }
  EXPECT_EQ(total.load(), int64_t{20000} * 28);
}

TEST(ThreadPoolTest, WorkersThatFellAsleepWakeUp) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_threads = false, .spin_nanos = 0});
  for (int call = 0; call < 200; ++call) {
    // Index 0 waits for index 1 to start: the sleeping worker must wake.
    HeadsClosure c(2, {0, 1});
    pool.ParallelFor(2, HeadsBody, &c);
    ExpectEachIndexOnce(c);
    ASSERT_FALSE(c.timed_out) << "call " << call;
    EXPECT_NE(c.thread_ids[0], c.thread_ids[1]);
  }
}

TEST(ThreadPoolTest, ConcurrentCallersAreSerialised) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 2, .pin_threads = false});
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      for (int call = 0; call < 2000; ++call) {
        pool.ParallelFor(
            4, [](int64_t, void* c) { static_cast<std::atomic<int64_t>*>(c)->fetch_add(1); },
            &total);
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 3 * 2000 * 4);
}

TEST(ThreadPoolTest, SingleThreadPoolRunsOnCaller) {
  ThreadPool pool(ThreadPoolOptions{.num_threads = 1});
  CountingClosure c(5);
  pool.ParallelFor(5, CountBody, &c);
  ExpectEachIndexOnce(c);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.thread_ids[i], std::this_thread::get_id());
}

TEST(ThreadPoolTest, WorkspaceIsAlignedAndWritable) {
  ThreadPool pool(1);
  const TfRuntime* rt = pool.runtime();
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{4096}, int64_t{1} << 22}) {
    void* ptr = rt->alloc_workspace(rt->context, bytes);
    ASSERT_NE(ptr, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 64, 0u) << bytes;
    if (bytes > 0) static_cast<char*>(ptr)[bytes - 1] = 1;
    rt->free_workspace(rt->context, ptr);
  }
  EXPECT_EQ(rt->alloc_workspace(rt->context, -1), nullptr);
}

TEST(ThreadPoolTest, FreedWorkspacesAreReusedForTheSameSize) {
  ThreadPool pool(1);
  const TfRuntime* rt = pool.runtime();
  void* first = rt->alloc_workspace(rt->context, 1 << 20);
  void* other = rt->alloc_workspace(rt->context, 1 << 20);  // both in use: distinct
  ASSERT_NE(first, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(first, other);
  rt->free_workspace(rt->context, first);
  EXPECT_EQ(rt->alloc_workspace(rt->context, 1 << 20), first);  // reused
  void* different_size = rt->alloc_workspace(rt->context, (1 << 20) + 64);
  EXPECT_NE(different_size, first);
  EXPECT_NE(different_size, other);
  // More frees than the cache keeps: the oldest are released, the rest stay
  // valid to hand out and to free.
  std::vector<void*> blocks;
  for (int i = 0; i < ThreadPool::kMaxCachedWorkspaces + 4; ++i) {
    blocks.push_back(rt->alloc_workspace(rt->context, 4096 + 64 * i));
  }
  for (void* p : blocks) rt->free_workspace(rt->context, p);
  rt->free_workspace(rt->context, first);
  rt->free_workspace(rt->context, other);
  rt->free_workspace(rt->context, different_size);
}

// A compiled model's kernels cycle through their workspace sizes once per
// inference: 40 sizes (more than the 16 blocks the cache once held) are all
// kept after the first cycle and all served from the cache in the second;
// past kMaxCachedWorkspaces the least recently freed go.
TEST(ThreadPoolTest, ACycleOfManySizesIsServedFromTheCache) {
  ThreadPool pool(1);
  const TfRuntime* rt = pool.runtime();
  auto size = [](int i) { return int64_t{4096} + 64 * i; };
  int64_t all = 0;
  for (int i = 0; i < 40; ++i) {
    void* p = rt->alloc_workspace(rt->context, size(i));
    ASSERT_NE(p, nullptr);
    rt->free_workspace(rt->context, p);
    all += size(i);
  }
  EXPECT_EQ(pool.CachedWorkspaceBytes(), all);
  for (int i = 0; i < 40; ++i) {
    void* p = rt->alloc_workspace(rt->context, size(i));
    EXPECT_EQ(pool.CachedWorkspaceBytes(), all - size(i)) << i;  // taken from the cache
    rt->free_workspace(rt->context, p);
  }
  const int more = ThreadPool::kMaxCachedWorkspaces + 2;
  int64_t kept = 0;
  for (int i = 0; i < more; ++i) {
    rt->free_workspace(rt->context, rt->alloc_workspace(rt->context, size(1000 + i)));
    if (i >= 2) kept += size(1000 + i);
  }
  EXPECT_EQ(pool.CachedWorkspaceBytes(), kept);  // the 40 and the first 2 of these went
}

TEST(ThreadPoolTest, PinningIsSkippedWhenOversubscribed) {
  const int more_than_cpus = static_cast<int>(std::thread::hardware_concurrency()) + 1;
  ThreadPool pool(
      ThreadPoolOptions{.num_threads = more_than_cpus, .pin_threads = true, .spin_nanos = 0});
  EXPECT_FALSE(pool.pinned());
  EXPECT_FALSE(pool.PinCallingThread());
}

}  // namespace
}  // namespace tunefleet
