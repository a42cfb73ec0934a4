// WorkerDaemon: the one shape of every worker process (builder, device
// agent, tuner): connect to the tracker, register, back off with jitter,
// heartbeat (all in WorkerConnection), hand the tracker's messages to the
// role, send the role's results, and drain on Stop(). Use it for any process
// that dials the tracker and does work for it; what differs between roles is
// the WorkerRoleInterface plugged in.
//
//   class BuilderDaemon : private WorkerRoleInterface {
//     BuilderDaemon(...) { worker_ = std::make_unique<WorkerDaemon>(options.worker, registration,
//     this); } void OnMessage(const proto::TrackerMessage& m) override { ... worker_.Send(result)
//     ... } void OnSession(const proto::Registered& registered) override { ... drop queued work ...
//     } int64_t InFlight() const override { ... } std::unique_ptr<WorkerDaemon> worker_;
//   };
//
// Drain (Stop(), e.g. on SIGTERM): from the moment Stop() is called the
// daemon takes no new work: a BuildRequest, MeasureRequest or JobAssignment
// that arrives is dropped unanswered (the tracker requeues it when the
// stream closes, as for any lost lease); everything else (trial updates,
// releases, errors) still reaches the role, and the role's results are still
// sent. Stop() waits until the role holds nothing (InFlight() == 0) or
// drain_timeout_s passes, then closes the stream: whatever is still
// unanswered is requeued by the tracker. The protocol has no "draining"
// message, so the tracker keeps the worker listed until the stream closes.
//
// Threads: the connection's reader thread calls the role's OnMessage and
// OnSession; Send() and the observers are thread-safe; Stop() must not be
// called from inside a role callback.
#ifndef TUNEFLEET_WORKER_STREAM_WORKER_DAEMON_H_
#define TUNEFLEET_WORKER_STREAM_WORKER_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "proto/fleet.pb.h"
#include "worker_stream/worker_connection.h"

namespace tunefleet {

// What every worker process is told on its command line.
struct WorkerDaemonOptions {
  std::string tracker_address;                            // "127.0.0.1:7070"
  std::string token;                                      // empty = none
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS; null = plaintext (loopback)
  // The PEM behind `credentials` (null = plaintext), for naming the cause
  // when the tracker cannot be reached (rpc/tls_diagnosis.h).
  std::shared_ptr<const TlsClientPem> tls_pem;
  std::string name;  // unique per live worker
  // Stop(): how long work already taken may take to finish before the stream
  // closes anyway (0: hand everything back at once).
  double drain_timeout_s = 30;
  // host:port of the process's /metrics endpoint (process metrics and
  // build info; worker_stream/worker_metrics.h starts it, not the daemon); empty:
  // none.
  std::string metrics_listen;

  [[nodiscard]] absl::Status Validate() const;
};

// The role-specific half of a worker process.
class WorkerRoleInterface {
 public:
  virtual ~WorkerRoleInterface() = default;
  // One message from the tracker, on the reader thread (Registered and
  // heartbeats are handled by the connection; new work never arrives here
  // while draining). Must not block for long: hand work to another thread.
  virtual void OnMessage(const proto::TrackerMessage& message) = 0;
  // A new session was registered (the tracker's Registered message: worker
  // id, and for agents the pinned builder keys): whatever the role held for
  // the previous one has been requeued by the tracker; forget it.
  virtual void OnSession(const proto::Registered& registered) = 0;
  // Work taken from the tracker and not yet answered (what a drain waits
  // for); count a piece as answered only once its result has been passed
  // to WorkerDaemon::Send. Thread-safe.
  virtual int64_t InFlight() const = 0;
};

class WorkerDaemon {
 public:
  // `registration` carries the role, device key, device, parallelism and
  // version; its name is set from options.name. `role` (not owned) must
  // outlive the daemon. `options` must be valid (Validate()).
  WorkerDaemon(WorkerDaemonOptions options, proto::Register registration,
               WorkerRoleInterface* role);
  ~WorkerDaemon();  // Stop()

  WorkerDaemon(const WorkerDaemon&) = delete;
  WorkerDaemon& operator=(const WorkerDaemon&) = delete;

  // Connects (and reconnects, forever) until Stop(). Call once.
  void Start();
  // Drains (see the top of this file), then disconnects. Returns how much
  // work was still unanswered when the stream closed. Idempotent (later
  // calls return 0).
  int64_t Stop();

  // Sends a result on the current session; false when it was dropped (no
  // session: the tracker requeued what it answered). Thread-safe.
  bool Send(const proto::WorkerMessage& message);

  bool draining() const;
  // New work dropped because it arrived while draining.
  int64_t refused_while_draining() const;
  const WorkerDaemonOptions& options() const { return options_; }
  const WorkerConnection& connection() const { return *connection_; }

 private:
  void OnMessage(const proto::TrackerMessage& message);

  const WorkerDaemonOptions options_;
  WorkerRoleInterface* const role_;

  mutable absl::Mutex mu_;
  absl::CondVar progress_;  // a result was sent, or the drain began
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int64_t refused_while_draining_ ABSL_GUARDED_BY(mu_) = 0;

  std::unique_ptr<WorkerConnection> connection_;
};

// Whether `message` hands the worker new work (a lease or a job).
bool IsNewWork(const proto::TrackerMessage& message);

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_WORKER_DAEMON_H_
