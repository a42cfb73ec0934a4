// RunInParallel: fn(0) .. fn(n - 1) on up to `threads` threads, the
// caller's one of them, each index exactly once and in no set order; it
// returns when every call has returned. A thread is started only for each
// `items_per_thread` items (starting one costs tens of microseconds), so a
// small n runs on the caller's thread alone.
//
//   std::vector<Row> rows(configs.size());
//   RunInParallel(configs.size(), 4, [&](size_t i) { rows[i] = Extract(configs[i]); },
//                 /*items_per_thread=*/32);
#ifndef TUNEFLEET_COMMON_RUN_IN_PARALLEL_H_
#define TUNEFLEET_COMMON_RUN_IN_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace tunefleet {

inline void RunInParallel(size_t n, int threads, const std::function<void(size_t)>& fn,
                          size_t items_per_thread = 1) {
  const size_t used = std::min<size_t>(static_cast<size_t>(std::max(threads, 1)),
                                       n / std::max<size_t>(items_per_thread, 1));
  if (used <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < used; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_RUN_IN_PARALLEL_H_
