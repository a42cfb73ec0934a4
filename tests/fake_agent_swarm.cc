#include "tests/fake_agent_swarm.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tests/fake_agent.h"
#include "worker_stream/worker_connection.h"

namespace tunefleet {

absl::Status FakeAgentSwarmOptions::Validate() const {
  if (tracker_address.empty()) return absl::InvalidArgumentError("no tracker address");
  if (device_key.empty()) return absl::InvalidArgumentError("device key is empty");
  if (agents < 1 || connections < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("agents and connections must be >= 1, got ", agents, " and ", connections));
  }
  if (!(measure_s > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("measure time must be > 0 s, got ", measure_s));
  }
  if (!(calibration_gflops >= 0) || !(calibration_noise >= 0)) {
    return absl::InvalidArgumentError("calibration figures must be >= 0");
  }
  if (!(initial_backoff_s > 0) || !(max_backoff_s >= initial_backoff_s)) {
    return absl::InvalidArgumentError("backoff must be > 0 and its maximum at least its start");
  }
  return absl::OkStatus();
}

struct FakeAgentSwarm::Agent {
  int index = 0;
  proto::WorkerMessage registration;
  absl::Mutex mu;
  Stream* stream ABSL_GUARDED_BY(mu) = nullptr;  // the live session's, or null
  uint64_t session ABSL_GUARDED_BY(mu) = 0;      // the latest stream's number
  bool registered ABSL_GUARDED_BY(mu) = false;
  double heartbeat_s ABSL_GUARDED_BY(mu) = 1.0;
  double backoff_s ABSL_GUARDED_BY(mu) = 0;
  // Arrived, in order; the front is being measured while `measuring`.
  std::deque<proto::MeasureRequest> queue ABSL_GUARDED_BY(mu);
  bool measuring ABSL_GUARDED_BY(mu) = false;
  double measure_start ABSL_GUARDED_BY(mu) = 0;
};

// One session of one agent. gRPC runs its reactions on its own threads;
// the timer thread writes from outside them, so the stream holds itself
// open (AddHold) until it has ended and no such write is being started:
// Acquire() (under the agent's lock, where the pointer is read) counts one
// in, Release() counts it out. No gRPC call is made under a lock: one that
// completes at once may run reactions on the calling thread.
class FakeAgentSwarm::Stream final
    : public grpc::ClientBidiReactor<proto::WorkerMessage, proto::TrackerMessage> {
 public:
  Stream(FakeAgentSwarm* swarm, Agent* agent, uint64_t session)
      : swarm_(swarm), agent_(agent), session_(session) {}

  // Dials; Acquire()d by the caller, which then calls Release().
  void Begin(proto::WorkerGateway::Stub* stub, const std::string& token) {
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    stub->async()->Connect(&context_, this);
    AddHold();
    Send(agent_->registration);
    StartRead(&incoming_);
    StartCall();
  }

  // False once the stream is closing: then neither Send nor Cancel.
  bool Acquire() {
    absl::MutexLock lock(&mu_);
    if (released_) return false;
    ++outside_;
    return true;
  }
  void Release() {
    {
      absl::MutexLock lock(&mu_);
      --outside_;
      if (!ended_ || outside_ > 0 || released_) return;
      released_ = true;
    }
    RemoveHold();  // last: OnDone (and delete) may run in it
  }

  // Queued; written one at a time, in order.
  void Send(const proto::WorkerMessage& message) {
    const proto::WorkerMessage* first = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (failed_) return;
      outbox_.push_back(message);
      if (writing_) return;
      writing_ = true;
      first = &outbox_.front();
    }
    StartWrite(first);
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    const proto::WorkerMessage* next = nullptr;
    {
      absl::MutexLock lock(&mu_);
      outbox_.pop_front();
      if (!ok) {
        failed_ = true;  // the call is over; no write follows (writing_ stays set)
      } else if (!outbox_.empty()) {
        next = &outbox_.front();
      } else {
        writing_ = false;
      }
    }
    if (next != nullptr) StartWrite(next);
  }
  void OnReadDone(bool ok) override {
    if (ok) {
      swarm_->OnMessage(*agent_, session_, incoming_);
      StartRead(&incoming_);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      ended_ = true;
      if (outside_ > 0 || released_) return;
      released_ = true;
    }
    RemoveHold();
  }
  void OnDone(const grpc::Status&) override {
    swarm_->OnStreamDone(*agent_, session_);
    delete this;
  }

 private:
  FakeAgentSwarm* const swarm_;
  Agent* const agent_;
  const uint64_t session_;
  grpc::ClientContext context_;
  proto::TrackerMessage incoming_;
  absl::Mutex mu_;
  std::deque<proto::WorkerMessage> outbox_ ABSL_GUARDED_BY(mu_);  // front: being written
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;     // the last read failed
  bool released_ ABSL_GUARDED_BY(mu_) = false;  // the hold is gone
  int outside_ ABSL_GUARDED_BY(mu_) = 0;        // Acquire()s not yet Release()d
};

FakeAgentSwarm::FakeAgentSwarm(FakeAgentSwarmOptions options, proto::DeviceInfo device)
    : options_(std::move(options)), device_(std::move(device)) {
  for (int c = 0; c < options_.connections; ++c) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxWorkerMessageBytes);
    args.SetMaxSendMessageSize(kMaxWorkerMessageBytes);
    // Each channel its own TCP connection (not one shared subchannel).
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                static_cast<int>(options_.initial_backoff_s * 1000));
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(options_.max_backoff_s * 1000));
    stubs_.push_back(proto::WorkerGateway::NewStub(grpc::CreateCustomChannel(
        options_.tracker_address,
        options_.credentials != nullptr ? options_.credentials : grpc::InsecureChannelCredentials(),
        args)));
  }
  for (int i = 0; i < options_.agents; ++i) {
    auto agent = std::make_unique<Agent>();
    agent->index = i;
    proto::Register* r = agent->registration.mutable_register_();
    r->set_role(proto::AGENT);
    r->set_name(absl::StrCat(options_.name, "-", i));
    r->set_device_key(options_.device_key);
    *r->mutable_device() = device_;
    r->set_parallelism(1);
    r->set_version("tunefleet-fake-agent-swarm/1");
    r->set_calibrates(options_.calibration_gflops > 0);
    absl::MutexLock lock(&agent->mu);
    agent->backoff_s = options_.initial_backoff_s;
    agents_.push_back(std::move(agent));
  }
}

FakeAgentSwarm::~FakeAgentSwarm() { Stop(); }

double FakeAgentSwarm::Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void FakeAgentSwarm::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopping_) return;
    started_ = true;
  }
  timer_ = std::thread([this] { TimerLoop(); });
  // The dials spread over a few seconds, as a fleet's agents come up: all
  // at once, the tracker would see 10,000 registrations in one burst.
  const double start = Now();
  for (int i = 0; i < options_.agents; ++i) {
    Schedule({start + 2e-4 * i, i, 0, EventKind::kDial});
  }
}

void FakeAgentSwarm::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || !started_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
    changed_.SignalAll();
  }
  if (timer_.joinable()) timer_.join();
  for (const std::unique_ptr<Agent>& agent : agents_) {
    Stream* stream = nullptr;
    {
      absl::MutexLock lock(&agent->mu);
      if (agent->stream != nullptr && agent->stream->Acquire()) stream = agent->stream;
    }
    if (stream == nullptr) continue;
    stream->Cancel();
    stream->Release();
  }
  absl::MutexLock lock(&mu_);
  auto all_done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return live_streams_ == 0; };
  mu_.AwaitWithTimeout(absl::Condition(&all_done), absl::Seconds(60));
}

int64_t FakeAgentSwarm::registered() const {
  absl::MutexLock lock(&mu_);
  return registered_;
}

int64_t FakeAgentSwarm::sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_;
}

int64_t FakeAgentSwarm::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

void FakeAgentSwarm::Schedule(Event event) {
  absl::MutexLock lock(&mu_);
  events_.push(event);
  changed_.Signal();
}

void FakeAgentSwarm::TimerLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (events_.empty()) {
      changed_.Wait(&mu_);
      continue;
    }
    const double wait = events_.top().at - Now();
    if (wait > 0) {
      changed_.WaitWithTimeout(&mu_, absl::Seconds(wait));
      continue;
    }
    const Event event = events_.top();
    events_.pop();
    mu_.Unlock();
    Fire(event);
    mu_.Lock();
  }
}

void FakeAgentSwarm::Fire(const Event& event) {
  Agent& agent = *agents_[event.agent];
  Stream* stream = nullptr;
  proto::WorkerMessage message;
  {
    absl::MutexLock lock(&agent.mu);
    switch (event.kind) {
      case EventKind::kDial: {
        if (agent.stream != nullptr || agent.session != event.session) return;
        ++agent.session;
        stream = new Stream(this, &agent, agent.session);
        agent.stream = stream;
        stream->Acquire();
        {
          absl::MutexLock count(&mu_);
          ++live_streams_;
        }
        break;
      }
      case EventKind::kHeartbeat: {
        if (agent.session != event.session || !agent.registered) return;
        if (!agent.stream->Acquire()) return;
        stream = agent.stream;
        message.mutable_heartbeat()->set_sent_at(
            absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
        Schedule({Now() + agent.heartbeat_s, agent.index, agent.session, EventKind::kHeartbeat});
        break;
      }
      case EventKind::kMeasured: {
        if (agent.session != event.session || !agent.measuring || agent.queue.empty()) return;
        const proto::MeasureRequest request = std::move(agent.queue.front());
        agent.queue.pop_front();
        agent.measuring = false;
        message = SimulatedMeasureResult(request, options_.measure_s, Now() - agent.measure_start);
        if (!agent.queue.empty()) StartMeasurement(agent);
        if (agent.stream == nullptr || !agent.stream->Acquire()) return;
        stream = agent.stream;
        absl::MutexLock count(&mu_);
        ++measured_;
        break;
      }
    }
  }
  if (event.kind == EventKind::kDial) {
    stream->Begin(stubs_[event.agent % stubs_.size()].get(), options_.token);
  } else {
    stream->Send(message);
  }
  stream->Release();
}

void FakeAgentSwarm::StartMeasurement(Agent& agent) {
  agent.measuring = true;
  agent.measure_start = Now();
  Schedule(
      {agent.measure_start + options_.measure_s, agent.index, agent.session, EventKind::kMeasured});
}

void FakeAgentSwarm::OnMessage(Agent& agent, uint64_t session,
                               const proto::TrackerMessage& message) {
  Stream* reply_on = nullptr;
  proto::WorkerMessage reply;
  bool cancel = false;
  {
    absl::MutexLock lock(&agent.mu);
    if (agent.session != session || agent.stream == nullptr) return;
    if (message.has_registered()) {
      if (agent.registered) return;
      agent.registered = true;
      agent.backoff_s = options_.initial_backoff_s;
      agent.queue.clear();  // the tracker requeued the last session's work
      agent.measuring = false;
      if (message.registered().heartbeat_interval_s() > 0) {
        agent.heartbeat_s = message.registered().heartbeat_interval_s();
      }
      {
        absl::MutexLock count(&mu_);
        ++registered_;
        ++sessions_;
      }
      // The first heartbeat somewhere in the first interval: spread out.
      double first;
      {
        absl::MutexLock random(&mu_);
        first = agent.heartbeat_s * absl::Uniform(jitter_, 0.0, 1.0);
      }
      Schedule({Now() + first, agent.index, session, EventKind::kHeartbeat});
    } else if (message.has_measure()) {
      agent.queue.push_back(message.measure());
      if (!agent.measuring) StartMeasurement(agent);
    } else if (message.has_calibrate() && options_.calibration_gflops > 0) {
      reply.mutable_calibration()->set_gflops(options_.calibration_gflops);
      reply.mutable_calibration()->set_noise(options_.calibration_noise);
      reply.mutable_calibration()->set_repeats(12);
      if (agent.stream->Acquire()) reply_on = agent.stream;
    } else if (message.has_error() && message.error().fatal()) {
      cancel = agent.stream->Acquire();  // refused: dial again after the backoff
      if (cancel) reply_on = agent.stream;
    }
  }
  if (reply_on == nullptr) return;
  if (cancel) {
    reply_on->Cancel();
  } else {
    reply_on->Send(reply);
  }
  reply_on->Release();
}

void FakeAgentSwarm::OnStreamDone(Agent& agent, uint64_t session) {
  double wait = 0;
  bool stopping;
  {
    absl::MutexLock lock(&agent.mu);
    if (agent.session == session) agent.stream = nullptr;
    const bool was_registered = agent.registered;
    agent.registered = false;
    agent.queue.clear();
    agent.measuring = false;
    absl::MutexLock count(&mu_);
    if (was_registered) --registered_;
    --live_streams_;
    stopping = stopping_;
    wait = agent.backoff_s * absl::Uniform(jitter_, 0.5, 1.5);
    agent.backoff_s = std::min(agent.backoff_s * 2, options_.max_backoff_s);
    changed_.SignalAll();
  }
  if (!stopping) Schedule({Now() + wait, agent.index, session, EventKind::kDial});
}

}  // namespace tunefleet
