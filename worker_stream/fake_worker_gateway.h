// FakeWorkerGateway: an in-process tracker stand-in for tests of workers
// (builder, agent, tuner daemons, the connection itself). Listens on
// 127.0.0.1 (a port the kernel picks), answers every Register with
// Registered (worker ids "worker-1", "worker-2", ..., heartbeats every
// 20 ms), records what workers send, and sends what the test enqueues. In
// the other modes it refuses every Register with a fatal PERMISSION_DENIED
// error, or never answers it; DropStream() ends a stream with an error.
//
//   FakeWorkerGateway tracker;
//   ... start a worker dialing tracker.address() ...
//   ASSERT_TRUE(tracker.WaitFor([&] { return tracker.registrations() == 1; }));
//   tracker.Enqueue(work);
//   ASSERT_TRUE(tracker.WaitFor([&] { return tracker.received().size() == 1; }));
#ifndef TUNEFLEET_WORKER_STREAM_FAKE_WORKER_GATEWAY_H_
#define TUNEFLEET_WORKER_STREAM_FAKE_WORKER_GATEWAY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/fleet.grpc.pb.h"

namespace tunefleet {

class FakeWorkerGateway final : public proto::WorkerGateway::Service {
 public:
  // How every Register is answered: kRegister; kRefuse (a fatal Error);
  // kSilent (never); kKeepOpen, registered as kRegister, but a stream the
  // worker half-closes is not ended until the worker cancels it (a tracker
  // that hangs).
  enum class Mode { kRegister, kRefuse, kSilent, kKeepOpen };

  explicit FakeWorkerGateway(Mode mode = Mode::kRegister);
  ~FakeWorkerGateway() override;

  std::string address() const;

  // Sent on the current stream after the worker's next message (its
  // heartbeats come every 20 ms).
  void Enqueue(proto::TrackerMessage message);
  // Ends the current stream with UNAVAILABLE after the worker's next message.
  void DropStream();
  // Builder keys the next Registered pins (Registered.builder_keys).
  void SetBuilderKeys(std::vector<std::string> keys);

  // Streams that opened with a Register, whatever the mode.
  int registers_seen() const;
  // Registers answered with Registered (kRegister), and refused (kRefuse).
  int registrations() const;
  int refusals() const;
  proto::Register last_registration() const;
  std::string last_authorization() const;
  int heartbeats() const;
  // Every non-heartbeat message after Register, in arrival order.
  std::vector<proto::WorkerMessage> received() const;

  // Polls `condition` until it holds or `timeout` passes.
  static bool WaitFor(const std::function<bool()>& condition,
                      absl::Duration timeout = absl::Seconds(60));

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<proto::TrackerMessage, proto::WorkerMessage>* stream) override;

 private:
  const Mode mode_;
  mutable absl::Mutex mu_;
  int registers_seen_ ABSL_GUARDED_BY(mu_) = 0;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int refusals_ ABSL_GUARDED_BY(mu_) = 0;
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
  proto::Register last_registration_ ABSL_GUARDED_BY(mu_);
  std::string last_authorization_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::WorkerMessage> received_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::TrackerMessage> outbox_ ABSL_GUARDED_BY(mu_);
  bool drop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> builder_keys_ ABSL_GUARDED_BY(mu_);

  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_FAKE_WORKER_GATEWAY_H_
