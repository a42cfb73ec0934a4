// A worker's side of the fleet stream (proto/fleet.proto, WorkerGateway.
// Connect), shared by the builder, the device agent and the tuner process.
//
//   WorkerConnectionOptions options;
//   options.tracker_address = "127.0.0.1:7070";
//   options.token = token;                       // "authorization: Bearer"
//   options.registration.set_role(proto::AGENT); // + name, device_key, ...
//   WorkerConnection connection(options, [&](const proto::TrackerMessage& m) {
//     ... hand the work to another thread; never block here for long ...
//   });
//   connection.Start();
//   ...
//   connection.Send(result_message);
//   connection.Stop();
//
// Start() runs a thread that dials the tracker, sends Register, waits for
// Registered, then reads every message and passes it to `on_message`
// (Registered and tracker Heartbeats are handled here and not passed on). It
// sends a Heartbeat every heartbeat interval the tracker asked for. When the
// stream breaks or cannot be opened it logs why, waits (exponential backoff
// with jitter: initial_backoff_s doubling to max_backoff_s, each wait
// multiplied by a random factor in [0.5, 1.5]) and dials again, forever until
// Stop(). A fatal Error from the tracker (e.g. a refused registration) is
// logged and also retried with backoff.
//
// Results survive a break: every BuildResult and MeasureResult Send is given
// (written or not: no session, or the write failed) is kept for
// kResultResendWindowS after it was last written, and written again, in
// order, as soon as the next session is registered (after `on_session`). A
// tracker that already counted one ignores it; one that took over from the
// tracker that gave the lease, or that requeued it when the stream broke,
// adopts it (tracker/lease_tokens.h), so work in flight across a failover is
// not done twice. At most kMaxHeldResults results and kMaxHeldResultBytes
// are kept (the oldest go first).
//
// `on_session` (optional) is called on the reader thread each time a new
// session is registered (with the worker id), so a worker can drop state tied
// to the previous session: whatever it held then has been requeued by the
// tracker. It runs before the session is published: connected() turns true
// only after it returns, and Send() from inside it returns false.
//
// Threads: one reader thread (dials, registers, reads, backs off; the only
// caller of `on_message` and `on_session`) and one heartbeat thread. Send()
// may be called from any thread, including from inside the handlers.
//
// Channel settings: keepalive pings every 10 s (timeout 5 s, also without
// calls, unlimited pings without data), so a tracker must accept pings that
// often (GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS <= 10 s);
// messages up to 256 MiB each way (artifacts travel in messages); gRPC's own
// reconnect backoff follows initial/max_backoff_s; and each connection has
// its own subchannel (its own TCP connection), so several workers in one
// process break and reconnect independently.
#ifndef TUNEFLEET_WORKER_STREAM_WORKER_CONNECTION_H_
#define TUNEFLEET_WORKER_STREAM_WORKER_CONNECTION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/fleet.grpc.pb.h"
#include "proto/fleet.pb.h"
#include "rpc/leader_hint.h"
#include "rpc/tls_diagnosis.h"

namespace tunefleet {

// Largest message either way on a worker stream (an artifact is one message).
inline constexpr int kMaxWorkerMessageBytes = 256 << 20;
// Results kept for the next session (see WorkerConnection).
inline constexpr double kResultResendWindowS = 10;
inline constexpr int kMaxHeldResults = 64;
// How long Stop() waits for the tracker to end a half-closed session (so it
// has read every message written before Stop()) before cancelling the call.
inline constexpr double kStopGraceS = 2;
inline constexpr int64_t kMaxHeldResultBytes = int64_t{64} << 20;

struct WorkerConnectionOptions {
  // "127.0.0.1:7070", or tracker replicas "a:7070,b:7070": a standby's
  // named leader is dialled next, else the next address (rpc/leader_hint.h).
  std::string tracker_address;
  // Sent as metadata "authorization: Bearer <token>"; empty = none.
  std::string token;
  proto::Register registration;  // role, name, device_key, device, parallelism
  // Null = insecure (loopback).
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // The PEM behind `credentials` (null = plaintext): when the tracker is
  // unreachable, the first failure of each outage is diagnosed
  // (rpc/tls_diagnosis.h) so the log names a TLS misconfiguration.
  std::shared_ptr<const TlsClientPem> tls_pem;
  double initial_backoff_s = 0.1;
  double max_backoff_s = 5.0;
  double default_heartbeat_interval_s = 1.0;  // until Registered says otherwise
};

// TLS for a worker's (or a client's) channel to the tracker: `ca_file`, the
// CA that signed the tracker's certificate (PEM); `cert_file` and `key_file`,
// this side's own certificate and key, for trackers that require client
// certificates (both or neither). An empty ca_file returns nullptr:
// plaintext, which the tracker only accepts on loopback. Errors name the
// file that cannot be read.
[[nodiscard]] absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeTlsCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file);
// The same from PEM already read (LoadTlsClientPem); null `pem`: nullptr.
std::shared_ptr<grpc::ChannelCredentials> TlsCredentialsFromPem(const TlsClientPem* pem);

class WorkerConnection {
 public:
  using MessageHandler = std::function<void(const proto::TrackerMessage&)>;
  using SessionHandler = std::function<void(const proto::Registered& registered)>;

  WorkerConnection(WorkerConnectionOptions options, MessageHandler on_message,
                   SessionHandler on_session = nullptr);
  ~WorkerConnection();  // Stop()

  WorkerConnection(const WorkerConnection&) = delete;
  WorkerConnection& operator=(const WorkerConnection&) = delete;

  // Starts the reader and heartbeat threads. Call once.
  void Start();
  // Ends the session and joins both threads; idempotent. A registered
  // session is half-closed, so that the tracker reads every message written
  // before Stop() (a result sent just before it included) and then ends the
  // call; it is cancelled only if the tracker has not within kStopGraceS. A
  // session still dialling is cancelled at once, and a backoff wait woken.
  // Do not call it from inside a handler (it would join its own thread).
  void Stop();

  // Sends on the current session's stream (thread-safe, serialised with a
  // mutex). false when there is no registered session or the write failed:
  // the message is dropped, except a result, which the next session gets
  // (see above).
  bool Send(const proto::WorkerMessage& message);

  bool connected() const;
  int64_t sessions() const;       // sessions registered so far
  std::string worker_id() const;  // of the current session ("" if none)
  // Dial attempts and sessions that ended (failed to open or register, or
  // broke); for tests and diagnostics.
  int64_t failures() const;
  // Results written again to a later session so far.
  int64_t results_resent() const;

 private:
  struct HeldResult {
    proto::WorkerMessage message;
    double written_at = -1;  // steady seconds of the last write; -1: never written
  };
  struct Session;
  struct SessionEnd {
    bool registered = false;  // the tracker answered Registered
    bool refused = false;     // the tracker sent a fatal Error instead
    std::string worker_id;
    std::string reason;       // why the session ended
    std::string leader_hint;  // the leader a standby tracker named
  };

  // A channel and stub for `address` (reader thread, or the constructor).
  void Dial(const std::string& address);
  void ReaderLoop();
  void HeartbeatLoop();
  // Dials, registers and reads until the stream ends.
  SessionEnd RunSession();
  // Keeps `message` (a result) for later sessions, or refreshes its write time.
  void HoldResult(const proto::WorkerMessage& message, bool written)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the held results to `session`, just registered.
  void ResendHeldResults(Session& session);
  // Waits `seconds` or until Stop(); false when stopping.
  bool SleepUnlessStopping(double seconds);
  bool stopping() const;

  const WorkerConnectionOptions options_;
  const MessageHandler on_message_;
  const SessionHandler on_session_;
  TrackerAddresses trackers_;  // reader thread only
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::WorkerGateway::Stub> stub_;
  absl::BitGen jitter_;  // reader thread only

  mutable absl::Mutex mu_;
  absl::CondVar wake_;  // Stop(), new heartbeat intervals, a session's end
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The session being dialled or read; its context is what Stop() cancels.
  std::shared_ptr<Session> session_ ABSL_GUARDED_BY(mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  std::string worker_id_ ABSL_GUARDED_BY(mu_);
  double heartbeat_interval_s_ ABSL_GUARDED_BY(mu_);
  int64_t sessions_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<HeldResult> held_results_ ABSL_GUARDED_BY(mu_);
  int64_t held_result_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t results_resent_ ABSL_GUARDED_BY(mu_) = 0;

  absl::Mutex join_mu_;  // serialises joins when Stop() races itself
  std::thread reader_thread_;
  std::thread heartbeat_thread_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_WORKER_CONNECTION_H_
