#include "tests/fake_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto_convert/run_request.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

absl::Status FakeAgentOptions::Validate() const {
  if (absl::Status valid = worker.Validate(); !valid.ok()) return valid;
  if (device_key.empty()) return absl::InvalidArgumentError("device key is empty");
  if (costs != nullptr && !(time_scale > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("time scale must be > 0, got ", time_scale));
  }
  if (!(measure_s > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("measure time must be > 0 s, got ", measure_s));
  }
  if (!(calibration_gflops >= 0) || !(calibration_noise >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("calibration figures must be >= 0, got ",
                                                   calibration_gflops, " GFLOPS, spread ",
                                                   calibration_noise));
  }
  return absl::OkStatus();
}

proto::WorkerMessage SimulatedMeasureResult(const proto::MeasureRequest& request, double cost_s,
                                            double seconds) {
  proto::WorkerMessage message;
  proto::MeasureResult* result = message.mutable_measure_result();
  result->set_lease_id(request.lease_id());
  proto::RunResult* run = result->mutable_run();
  run->set_error_no(0);  // NO_ERROR
  // Like the real time evaluator: costs trimmed once (min and max dropped
  // when more than 2 repeats).
  const int repeat = ResolveMeasureOptions(request.run().options()).repeat;
  for (int i = 0; i < (repeat > 2 ? repeat - 2 : repeat); ++i) run->add_costs(cost_s);
  run->set_run_seconds(seconds);
  result->set_measure_seconds(seconds);
  return message;
}

FakeAgent::FakeAgent(FakeAgentOptions options, proto::DeviceInfo device)
    : options_(std::move(options)) {
  proto::Register registration;
  registration.set_role(proto::AGENT);
  registration.set_device_key(options_.device_key);
  *registration.mutable_device() = std::move(device);
  registration.set_parallelism(1);
  registration.set_version("tunefleet-fake-agent/1");
  registration.set_calibrates(options_.calibration_gflops > 0);
  worker_ = std::make_unique<WorkerDaemon>(options_.worker, std::move(registration),
                                           static_cast<WorkerRoleInterface*>(this));
  measuring_thread_ = std::thread([this] { MeasureLoop(); });
}

FakeAgent::~FakeAgent() { Stop(); }

void FakeAgent::Start() { worker_->Start(); }

void FakeAgent::Stop() {
  worker_->Stop();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    changed_.SignalAll();
  }
  if (measuring_thread_.joinable()) measuring_thread_.join();
}

int64_t FakeAgent::measured() const {
  absl::MutexLock lock(&mu_);
  return measured_;
}

int64_t FakeAgent::InFlight() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size()) + (measuring_ ? 1 : 0);
}

void FakeAgent::OnSession(const proto::Registered&) {
  absl::MutexLock lock(&mu_);
  queue_.clear();  // the tracker requeued them with the old session
}

void FakeAgent::OnMessage(const proto::TrackerMessage& message) {
  if (message.has_calibrate()) {
    proto::WorkerMessage answer;
    answer.mutable_calibration()->set_gflops(options_.calibration_gflops);
    answer.mutable_calibration()->set_noise(options_.calibration_noise);
    answer.mutable_calibration()->set_repeats(12);
    worker_->Send(answer);
    return;
  }
  if (!message.has_measure()) return;
  absl::MutexLock lock(&mu_);
  queue_.push_back(message.measure());
  changed_.SignalAll();
}

void FakeAgent::MeasureLoop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && queue_.empty()) changed_.Wait(&mu_);
    if (stopping_) return;
    const proto::MeasureRequest request = std::move(queue_.front());
    queue_.pop_front();
    measuring_ = true;
    // The simulated measurement; cut short only by the destructor.
    const absl::Time start = absl::Now();
    std::pair<proto::WorkerMessage, double> answer;
    if (options_.costs != nullptr) {
      answer = OracleMeasurement(request);
    } else {
      answer = {SimulatedMeasureResult(request, options_.measure_s, options_.measure_s),
                options_.measure_s};
    }
    const absl::Time until = start + absl::Seconds(answer.second);
    while (!stopping_ && !changed_.WaitWithDeadline(&mu_, until)) {
    }
    if (stopping_) return;
    proto::WorkerMessage message = std::move(answer.first);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    message.mutable_measure_result()->set_measure_seconds(seconds);
    message.mutable_measure_result()->mutable_run()->set_run_seconds(seconds);
    mu_.Unlock();
    worker_->Send(message);  // before it stops counting (a drain waits for it)
    mu_.Lock();
    measuring_ = false;
    ++measured_;
  }
}

std::pair<proto::WorkerMessage, double> FakeAgent::OracleMeasurement(
    const proto::MeasureRequest& request) {
  const proto::RunRequest& run = request.run();
  auto failed = [&](const std::string& why) {
    proto::WorkerMessage message;
    proto::MeasureResult* result = message.mutable_measure_result();
    result->set_lease_id(request.lease_id());
    result->mutable_run()->set_error_no(static_cast<int>(MeasureErrorNo::kRuntimeDevice));
    result->mutable_run()->set_error_msg(absl::StrCat("fake agent: ", why));
    return std::pair<proto::WorkerMessage, double>(std::move(message), 0.0);
  };
  constexpr absl::string_view kPlaceholder = "SIMULATED ";
  std::string config_json;
  if (!run.shared_object().empty()) {
    const std::string& bytes = run.shared_object();
    // "SIMULATED <job id> <config json>"
    const size_t config_at = bytes.find(' ', kPlaceholder.size());
    if (!absl::StartsWith(bytes, kPlaceholder) || config_at == std::string::npos) {
      return failed("the artifact is not a test builder's placeholder");
    }
    config_json = bytes.substr(config_at + 1);
    configs_[run.artifact_hash()] = config_json;
  } else if (auto it = configs_.find(run.artifact_hash()); it != configs_.end()) {
    config_json = it->second;
  } else {  // sent to another agent before: ask for the bytes, as a real agent does
    proto::WorkerMessage message;
    message.mutable_measure_result()->set_lease_id(request.lease_id());
    message.mutable_measure_result()->set_need_artifact(true);
    return {std::move(message), 0.0};
  }
  absl::StatusOr<CostOracle::Answer> answer =
      options_.costs->Cost(run.workload_name(), run.workload_args_json(), config_json);
  if (!answer.ok()) return failed(std::string(answer.status().message()));
  const double seconds = answer->trial_s * options_.time_scale;
  return {SimulatedMeasureResult(request, answer->cost_s, seconds), seconds};
}

}  // namespace tunefleet
