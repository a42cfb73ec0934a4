#include "worker_stream/lease_counter.h"

#include "common/logging.h"

namespace tunefleet {

void LeaseCounter::Took() {
  absl::MutexLock lock(&mu_);
  ++count_;
}

bool LeaseCounter::Answer(WorkerDaemon& worker, const proto::WorkerMessage& answer) {
  const bool sent = worker.Send(answer);
  absl::MutexLock lock(&mu_);
  --count_;
  return sent;
}

void LeaseCounter::Dropped(int64_t dropped, const std::string& worker_id, absl::string_view what) {
  if (dropped <= 0) return;
  {
    absl::MutexLock lock(&mu_);
    count_ -= dropped;
  }
  TF_LOG(INFO) << "new session " << worker_id << ": dropped " << dropped << " queued " << what
               << " of the previous one";
}

int64_t LeaseCounter::count() const {
  absl::MutexLock lock(&mu_);
  return count_;
}

}  // namespace tunefleet
