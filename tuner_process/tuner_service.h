// The tuner process's side of the fleet: holds a TUNER stream with the
// tracker, takes the jobs the tracker assigns (up to max_jobs at once),
// runs one JobRunner per job and sends its proposals as results arrive.
//
// Everything runs on the stream's reader thread (WorkerConnection), one
// message at a time, so the JobRunners need no locking. A new session
// drops every runner: the tracker reassigns the jobs with all it knows.
#ifndef TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_
#define TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/worker_connection.h"
#include "tuner_process/job_runner.h"

namespace tunefleet {

struct TunerServiceOptions {
  std::string tracker_address;
  std::string token;
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS; null = plaintext (loopback)
  std::string name;          // unique per tuner process
  int max_jobs = 4;
  bool log_progress = true;  // the AutoTVM progress line per job, in the log
};

class TunerService {
 public:
  explicit TunerService(TunerServiceOptions options);
  ~TunerService();  // Stop()

  void Start();
  void Stop();

  // Jobs held right now (thread-safe).
  int jobs() const;

 private:
  void OnMessage(const proto::TrackerMessage& message);
  void OnSession(const std::string& worker_id);
  void Propose(JobRunner& runner);

  const TunerServiceOptions options_;
  std::unique_ptr<WorkerConnection> connection_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<JobRunner>> runners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_
