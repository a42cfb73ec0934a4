#include "device_agent/fake_runner.h"

namespace tunefleet {

proto::RunResult FakeRunner::Run(const proto::RunRequest& request) {
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
  }
  if (respond_) return respond_(request);
  proto::RunResult result;
  for (int i = 0; i < request.options().repeat(); ++i) result.add_costs(1e-3);
  return result;
}

std::vector<proto::RunRequest> FakeRunner::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

}  // namespace tunefleet
