#include "worker_stream/worker_connection.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeTlsCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TlsClientPem> pem,
                      LoadTlsClientPem(ca_file, cert_file, key_file));
  return TlsCredentialsFromPem(pem.get());
}

std::shared_ptr<grpc::ChannelCredentials> TlsCredentialsFromPem(const TlsClientPem* pem) {
  if (pem == nullptr) return nullptr;
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem->ca;
  ssl.pem_cert_chain = pem->cert;
  ssl.pem_private_key = pem->key;
  return grpc::SslCredentials(ssl);
}

// One dial of the tracker. Shared between the reader thread (which owns the
// stream's reads and its Finish), Send() callers (writes, under write_mu)
// and Stop() (which only cancels the context). The context is declared first
// so that it outlives the stream.
struct WorkerConnection::Session {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<proto::WorkerMessage, proto::TrackerMessage>> stream;

  absl::Mutex write_mu;
  // Set before Finish(): no write may follow it.
  bool closed ABSL_GUARDED_BY(write_mu) = false;

  bool Write(const proto::WorkerMessage& message) {
    absl::MutexLock lock(&write_mu);
    if (closed || stream == nullptr) return false;
    return stream->Write(message);
  }

  // Half-closes the stream (no write may follow): the tracker reads what
  // was written before and then ends the call. May block as a write does;
  // cancelling the context unblocks it. False if closed already.
  bool HalfClose() {
    absl::MutexLock lock(&write_mu);
    if (closed || stream == nullptr) return false;
    closed = true;
    return stream->WritesDone();
  }

  // Ends the call and returns its status; waits for a write in progress
  // (which fails promptly once the call is over or cancelled).
  grpc::Status Close() {
    {
      absl::MutexLock lock(&write_mu);
      closed = true;
    }
    return stream->Finish();
  }
};

namespace {

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return "UNRECOGNIZED";
  }
}

std::string Describe(const grpc::Status& status) {
  if (status.ok()) return "stream closed by the tracker";
  return status.error_message().empty()
             ? std::string(GrpcCodeName(status.error_code()))
             : absl::StrCat(GrpcCodeName(status.error_code()), ": ", status.error_message());
}

int Millis(double seconds) { return static_cast<int>(std::max(1.0, seconds * 1000.0)); }

}  // namespace

WorkerConnection::WorkerConnection(WorkerConnectionOptions options, MessageHandler on_message,
                                   SessionHandler on_session)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_session_(std::move(on_session)),
      trackers_(options_.tracker_address, options_.credentials == nullptr),
      heartbeat_interval_s_(options_.default_heartbeat_interval_s) {
  Dial(trackers_.current());
}

void WorkerConnection::Dial(const std::string& address) {
  grpc::ChannelArguments args;
  // Keepalive is the backstop that notices a hung tracker or a dead network
  // path on an idle stream; heartbeats on the stream are the real detector.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(kMaxWorkerMessageBytes);
  args.SetMaxSendMessageSize(kMaxWorkerMessageBytes);
  // Without these, gRPC's own reconnect backoff (up to 120 s) would fail our
  // dials fast long after a restarted tracker is back.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, Millis(options_.initial_backoff_s));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, Millis(options_.initial_backoff_s));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, Millis(options_.max_backoff_s));
  // Several workers in one process (bench agents) each get their own TCP
  // connection, so they fail and recover independently.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = grpc::CreateCustomChannel(
      address,
      options_.credentials != nullptr ? options_.credentials : grpc::InsecureChannelCredentials(),
      args);
  stub_ = proto::WorkerGateway::NewStub(channel_);
}

WorkerConnection::~WorkerConnection() { Stop(); }

void WorkerConnection::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopping_) return;
    started_ = true;
  }
  reader_thread_ = std::thread([this] { ReaderLoop(); });
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void WorkerConnection::Stop() {
  std::shared_ptr<Session> registered;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      stopping_ = true;
      if (session_ != nullptr) {
        // Its stream exists once registered_ is set (RunSession).
        if (registered_) {
          registered = session_;
        } else {
          session_->context.TryCancel();
        }
      }
      wake_.SignalAll();
    }
  }
  if (registered != nullptr) {
    // Cancelling at once could drop what gRPC still holds for the wire (a
    // result a draining worker just sent): half-close instead and let the
    // tracker end the call once it has read everything.
    std::thread half_close([&registered] { registered->HalfClose(); });
    bool ended = false;
    {
      absl::MutexLock lock(&mu_);
      const absl::Time deadline = absl::Now() + absl::Seconds(kStopGraceS);
      while (session_ == registered && !wake_.WaitWithDeadline(&mu_, deadline)) {
      }
      ended = session_ != registered;
    }
    if (!ended) registered->context.TryCancel();
    half_close.join();
  }
  absl::MutexLock join_lock(&join_mu_);
  if (reader_thread_.joinable()) reader_thread_.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

namespace {

const std::string& LeaseOf(const proto::WorkerMessage& result) {
  return result.has_build_result() ? result.build_result().lease_id()
                                   : result.measure_result().lease_id();
}

}  // namespace

bool WorkerConnection::Send(const proto::WorkerMessage& message) {
  const bool result = message.has_build_result() || message.has_measure_result();
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    // Held before the write: a session registered meanwhile resends it.
    if (result) HoldResult(message, false);
    if (registered_) session = session_;
    if (session == nullptr) return false;
  }
  const bool written = session->Write(message);
  if (result && written) {
    absl::MutexLock lock(&mu_);
    HoldResult(message, true);
  }
  return written;
}

void WorkerConnection::HoldResult(const proto::WorkerMessage& message, bool written) {
  const double now = SystemClock().NowSeconds();
  // The same result again (a resend: one lease, one result) refreshes its entry.
  for (HeldResult& held : held_results_) {
    if (held.message.kind_case() == message.kind_case() &&
        LeaseOf(held.message) == LeaseOf(message)) {
      if (written) held.written_at = now;
      return;
    }
  }
  held_results_.push_back({message, written ? now : -1});
  held_result_bytes_ += static_cast<int64_t>(message.ByteSizeLong());
  while (!held_results_.empty() &&
         (static_cast<int>(held_results_.size()) > kMaxHeldResults ||
          held_result_bytes_ > kMaxHeldResultBytes ||
          (held_results_.front().written_at >= 0 &&
           now - held_results_.front().written_at > kResultResendWindowS))) {
    held_result_bytes_ -= static_cast<int64_t>(held_results_.front().message.ByteSizeLong());
    held_results_.pop_front();
  }
}

void WorkerConnection::ResendHeldResults(Session& session) {
  std::deque<HeldResult> held;
  {
    absl::MutexLock lock(&mu_);
    const double now = SystemClock().NowSeconds();
    for (HeldResult& r : held_results_) {
      if (r.written_at < 0 || now - r.written_at <= kResultResendWindowS) {
        held.push_back(std::move(r));
      }
    }
    held_results_.clear();
    held_result_bytes_ = 0;
  }
  if (held.empty()) return;
  TF_LOG(INFO) << "writing " << held.size()
               << " result(s) of an earlier session again (a tracker that counted them ignores "
                  "them)";
  int64_t resent = 0;
  for (HeldResult& r : held) {
    const bool written = session.Write(r.message);
    resent += written;
    absl::MutexLock lock(&mu_);
    HoldResult(r.message, written);
  }
  absl::MutexLock lock(&mu_);
  results_resent_ += resent;
}

int64_t WorkerConnection::results_resent() const {
  absl::MutexLock lock(&mu_);
  return results_resent_;
}

bool WorkerConnection::connected() const {
  absl::MutexLock lock(&mu_);
  return registered_;
}

int64_t WorkerConnection::sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_;
}

std::string WorkerConnection::worker_id() const {
  absl::MutexLock lock(&mu_);
  return worker_id_;
}

int64_t WorkerConnection::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

bool WorkerConnection::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool WorkerConnection::SleepUnlessStopping(double seconds) {
  const Stopwatch slept;
  absl::MutexLock lock(&mu_);
  for (double left = seconds; !stopping_ && left > 0; left = seconds - slept.ElapsedSeconds()) {
    wake_.WaitWithTimeout(&mu_, absl::Seconds(left));
  }
  return !stopping_;
}

void WorkerConnection::ReaderLoop() {
  double backoff_s = options_.initial_backoff_s;
  bool unreachable_before = false;  // the last session never reached the tracker
  while (!stopping()) {
    const std::string address = trackers_.current();
    TF_LOG(INFO) << "connecting to tracker " << address
                 << " role=" << proto::WorkerRole_Name(options_.registration.role())
                 << " name=" << options_.registration.name();
    SessionEnd end = RunSession();
    {
      absl::MutexLock lock(&mu_);
      ++failures_;
      if (stopping_) break;
    }
    if (end.registered) backoff_s = options_.initial_backoff_s;
    // A standby named the leader: dial it next, after the shortest wait.
    // Several replicas listed: the next one.
    bool followed = false;
    if (trackers_.Advance(end.leader_hint)) {
      followed = !end.leader_hint.empty() && trackers_.current() == end.leader_hint;
      if (followed) backoff_s = options_.initial_backoff_s;
      Dial(trackers_.current());
    }
    const double wait_s = backoff_s * absl::Uniform(jitter_, 0.5, 1.5);
    const std::string wait = absl::StrFormat("%.2f s", wait_s);
    if (followed) {
      TF_LOG(INFO) << "tracker " << address << " stands by; following the leader to "
                   << end.leader_hint << " in " << wait;
    } else if (end.registered) {
      TF_LOG(WARNING) << "session " << end.worker_id << " with tracker " << address << " ended ("
                      << end.reason << "); reconnecting in " << wait;
    } else if (end.refused) {
      TF_LOG(ERROR) << "tracker " << address << " refused registration of "
                    << options_.registration.name() << " (" << end.reason << "); retrying in "
                    << wait;
    } else if (!unreachable_before) {
      // First failure of an outage: say why, TLS misconfigurations by name
      // (the diagnosis may take seconds, so not on every retry).
      const absl::Status why =
          ExplainUnavailable(absl::UnavailableError(end.reason), address, options_.tls_pem.get());
      TF_LOG(WARNING) << "tracker " << address << " unreachable (" << why.message()
                      << "); retrying in " << wait;
    } else {
      TF_LOG(WARNING) << "tracker " << address << " unreachable (" << end.reason
                      << "); retrying in " << wait;
    }
    unreachable_before = !end.registered && !end.refused && !followed;
    backoff_s = std::min(backoff_s * 2, options_.max_backoff_s);
    if (!SleepUnlessStopping(wait_s)) break;
  }
  TF_LOG(INFO) << "connection to tracker " << trackers_.current() << " stopped";
}

WorkerConnection::SessionEnd WorkerConnection::RunSession() {
  SessionEnd end;
  auto session = std::make_shared<Session>();
  if (!options_.token.empty()) {
    session->context.AddMetadata("authorization", "Bearer " + options_.token);
  }
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      end.reason = "stopping";
      return end;
    }
    // From here Stop() cancels this context (also before the call exists:
    // the call is then cancelled as soon as it starts).
    session_ = session;
  }
  session->stream = stub_->Connect(&session->context);

  proto::WorkerMessage register_message;
  *register_message.mutable_register_() = options_.registration;
  proto::TrackerMessage message;
  if (session->Write(register_message)) {
    while (session->stream->Read(&message)) {
      if (message.has_registered()) {
        end.registered = true;
        break;
      }
      if (message.has_error()) {
        const proto::Error& error = message.error();
        end.reason = absl::StrCat(error.code(), ": ", error.message());
        if (error.fatal()) {
          end.refused = true;
          session->context.TryCancel();
          break;
        }
        TF_LOG(WARNING) << "tracker error before registration: " << end.reason;
        continue;
      }
      TF_LOG(WARNING) << "tracker sent a message before Registered; ignored";
    }
  }

  if (end.registered) {
    const proto::Registered& registered = message.registered();
    end.worker_id = registered.worker_id();
    // Before the session is published, so that connected() implies the
    // worker has dropped the previous session's state.
    if (on_session_) on_session_(registered);
    {
      absl::MutexLock lock(&mu_);
      registered_ = true;
      worker_id_ = registered.worker_id();
      if (registered.heartbeat_interval_s() > 0) {
        heartbeat_interval_s_ = registered.heartbeat_interval_s();
      }
      ++sessions_;
      wake_.SignalAll();
    }
    TF_LOG(INFO) << "registered with tracker " << trackers_.current()
                 << " worker_id=" << registered.worker_id()
                 << " name=" << options_.registration.name()
                 << " heartbeat_s=" << registered.heartbeat_interval_s();
    ResendHeldResults(*session);
    while (session->stream->Read(&message)) {
      switch (message.kind_case()) {
        case proto::TrackerMessage::kRegistered:
          TF_LOG(WARNING) << "tracker sent Registered again on session " << end.worker_id
                          << "; ignored";
          break;
        case proto::TrackerMessage::kHeartbeat:
          break;
        case proto::TrackerMessage::kError:
          TF_LOG(WARNING) << "tracker error on session " << end.worker_id << ": "
                          << message.error().code() << ": " << message.error().message()
                          << (message.error().fatal() ? " (fatal)" : "");
          if (on_message_) on_message_(message);
          break;
        default:
          if (on_message_) on_message_(message);
      }
    }
    absl::MutexLock lock(&mu_);
    registered_ = false;
    worker_id_.clear();
  }

  const grpc::Status status = session->Close();
  end.leader_hint = LeaderHint(session->context);
  if (!end.refused) {
    end.reason = stopping() ? "stopping" : Describe(status);
  }
  absl::MutexLock lock(&mu_);
  session_.reset();
  wake_.SignalAll();  // a Stop() waiting for the session to end
  return end;
}

void WorkerConnection::HeartbeatLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // Woken early by Stop() or a new session: a heartbeat then is harmless.
      wake_.WaitWithTimeout(&mu_, absl::Seconds(heartbeat_interval_s_));
      if (stopping_) return;
      if (!registered_) continue;
    }
    proto::WorkerMessage heartbeat;
    heartbeat.mutable_heartbeat()->set_sent_at(SystemClock().WallSeconds());
    Send(heartbeat);
  }
}

}  // namespace tunefleet
