#include "kernel_runtime/fake_runner.h"

#include "proto_convert/run_request.h"

namespace tunefleet {

proto::RunResult FakeRunner::Run(const proto::RunRequest& request) {
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
  }
  if (respond_) return respond_(request);
  proto::RunResult result;
  // Like the real evaluator: unset options take their defaults, and more
  // than 2 repeats are trimmed to repeat - 2 costs.
  const int repeat = ResolveMeasureOptions(request.options()).repeat;
  for (int i = 0; i < (repeat > 2 ? repeat - 2 : repeat); ++i) result.add_costs(1e-3);
  result.set_timed_repeats(repeat);
  return result;
}

void FakeRunner::Recycle() {
  absl::MutexLock lock(&mu_);
  ++recycles_;
}

int FakeRunner::recycles() const {
  absl::MutexLock lock(&mu_);
  return recycles_;
}

std::vector<proto::RunRequest> FakeRunner::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

}  // namespace tunefleet
