#include "tracker/replica.h"

#include <unistd.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/health_check_service_interface.h"
#include "metrics/metrics_server.h"
#include "proto/fleet.grpc.pb.h"
#include "rpc/leader_hint.h"
#include "tracker/store/open_store.h"
#include "tracker/store/postgres_connection.h"

namespace tunefleet {
namespace {

// "host:port" with its port replaced (listen addresses: "0.0.0.0:0",
// "[::]:7070", "127.0.0.1:0").
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(colon == std::string::npos ? address : address.substr(0, colon), ":", port);
}

std::string DefaultAdvertise(const std::string& listen, int port) {
  const size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
  if (host.empty() || host == "0.0.0.0" || host == "[::]") {
    char name[256] = {};
    host = gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
  }
  return absl::StrCat(host, ":", port);
}

}  // namespace

// The standby's gRPC server: every call is refused naming the leader.
class StandbyServer : public grpc::CallbackGenericService {
 public:
  // Binds `options.listen` (the port in *port) and, when set,
  // `options.metrics_listen` (this process's metrics only; the port in
  // *metrics_port), so probes and scrapes see a live standby.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<StandbyServer>> Start(
      const TrackerServerOptions& options, int* port, int* metrics_port) {
    std::unique_ptr<StandbyServer> standby(new StandbyServer());
    if (!options.metrics_listen.empty()) {
      TF_ASSIGN_OR_RETURN(standby->metrics_, StartMetricsServer(options.metrics_listen, {}));
      *metrics_port = standby->metrics_->port();
    }
    TF_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                        TrackerServerCredentials(options));
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options.listen, credentials, port);
    builder.RegisterCallbackGenericService(standby.get());
    standby->server_ = builder.BuildAndStart();
    if (standby->server_ == nullptr || *port == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", options.listen,
                       " (address in use, or not an address of this host)"));
    }
    grpc::HealthCheckServiceInterface* health = standby->server_->GetHealthCheckService();
    health->SetServingStatus("", true);  // a healthy standby is ready: it redirects
    health->SetServingStatus(proto::WorkerGateway::service_full_name(), false);
    health->SetServingStatus(proto::JobService::service_full_name(), false);
    return standby;
  }

  ~StandbyServer() override { Stop(); }

  // What calls are told: the leader row as last read.
  void SetLeader(const LeaderInfo& leader) {
    absl::MutexLock lock(&mutex_);
    leader_ = leader;
  }

  // Ready ("" SERVING) only while the standby holds its lease session: a
  // standby that cannot reach the database could never take over.
  void SetReady(bool ready) {
    if (server_ != nullptr) server_->GetHealthCheckService()->SetServingStatus("", ready);
  }

  // The metrics server, for the leader to keep serving on (no gap).
  std::unique_ptr<MetricsServer> ReleaseMetrics() { return std::move(metrics_); }

  void Stop() {
    metrics_.reset();
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    LeaderInfo leader;
    {
      absl::MutexLock lock(&mutex_);
      leader = leader_;
    }
    class Refusal : public grpc::ServerGenericBidiReactor {
     public:
      explicit Refusal(grpc::Status status) { Finish(std::move(status)); }
      void OnDone() override { delete this; }
    };
    std::string message = "standby tracker: ";
    if (leader.holder.empty()) {
      absl::StrAppend(&message, "no tracker leads yet; try again shortly");
    } else {
      absl::StrAppend(&message, "the leader is at ", leader.holder, " (epoch ", leader.epoch, ")");
      ctx->AddTrailingMetadata(kLeaderMetadataKey, leader.holder);
    }
    return new Refusal(grpc::Status(grpc::StatusCode::UNAVAILABLE, message));
  }

 private:
  StandbyServer() = default;
  absl::Mutex mutex_;
  LeaderInfo leader_ ABSL_GUARDED_BY(mutex_);
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MetricsServer> metrics_;
};

absl::StatusOr<std::unique_ptr<TrackerReplica>> TrackerReplica::Start(TrackerServerOptions server,
                                                                      ReplicaOptions replica) {
  std::unique_ptr<TrackerReplica> r(new TrackerReplica());
  r->options_ = std::move(replica);
  if (!IsPostgresAddress(server.store_path)) {
    // One tracker on its own store: it leads, with no lease to hold.
    TF_ASSIGN_OR_RETURN(std::unique_ptr<TrackerServer> alone, TrackerServer::Start(server));
    r->port_ = alone->port();
    r->metrics_port_ = alone->metrics_port();
    r->leading_ = true;
    absl::MutexLock lock(&r->mutex_);
    r->server_ = std::move(alone);
    return r;
  }

  // A replica that could never lead refuses to stand by.
  TF_RETURN_IF_ERROR(LoadCheckedTokens(server).status());
  TF_ASSIGN_OR_RETURN(r->standby_, StandbyServer::Start(server, &r->port_, &r->metrics_port_));
  // The leader this replica may become binds the ports the standby holds.
  server.listen = WithPort(server.listen, r->port_);
  if (!server.metrics_listen.empty())
    server.metrics_listen = WithPort(server.metrics_listen, r->metrics_port_);
  if (r->options_.advertise.empty())
    r->options_.advertise = DefaultAdvertise(server.listen, r->port_);
  TF_ASSIGN_OR_RETURN(r->lease_,
                      PostgresLeaderLease::Connect(server.store_path, r->LeaseOptions()));
  r->server_options_ = std::move(server);
  TF_LOG(INFO) << "tracker replica on port " << r->port_ << " (advertised as "
               << r->options_.advertise << ", " << DescribeStore(r->server_options_.store_path)
               << "): standing by until it holds the leader lease";
  r->thread_ = std::thread([p = r.get()] { p->Run(); });
  return r;
}

LeaderLeaseOptions TrackerReplica::LeaseOptions() const {
  LeaderLeaseOptions lease;
  lease.holder = options_.advertise;
  lease.ttl = options_.lease_ttl;
  lease.call_timeout = std::min(absl::Seconds(2), options_.lease_ttl / 2);
  return lease;
}

void TrackerReplica::Run() {
  absl::Status ended = StandBy();
  if (ended.ok() && !stop_.HasBeenNotified()) ended = Lead();
  {
    absl::MutexLock lock(&mutex_);
    ended_ = ended;
  }
  done_.Notify();
}

absl::Status TrackerReplica::StandBy() {
  while (!stop_.HasBeenNotified()) {
    if (lease_ == nullptr) {
      absl::StatusOr<std::unique_ptr<PostgresLeaderLease>> lease =
          PostgresLeaderLease::Connect(server_options_.store_path, LeaseOptions());
      if (!lease.ok()) {
        standby_->SetReady(false);
        TF_LOG(WARNING) << "standby: " << lease.status() << "; trying again";
        stop_.WaitForNotificationWithTimeout(options_.standby_poll);
        continue;
      }
      lease_ = std::move(lease).value();
      standby_->SetReady(true);
    }
    absl::StatusOr<bool> acquired = lease_->TryAcquire();
    if (!acquired.ok()) {
      standby_->SetReady(false);
      TF_LOG(WARNING) << "standby: " << acquired.status() << "; reconnecting";
      lease_.reset();
      stop_.WaitForNotificationWithTimeout(options_.standby_poll);
      continue;
    }
    if (*acquired) return absl::OkStatus();
    if (absl::StatusOr<LeaderInfo> leader = lease_->Leader(); leader.ok()) {
      standby_->SetLeader(*leader);
    }
    stop_.WaitForNotificationWithTimeout(options_.standby_poll);
  }
  return absl::OkStatus();
}

absl::Status TrackerReplica::Lead() {
  TF_LOG(INFO) << "took the leader lease at epoch " << lease_->epoch() << ": resuming every job";
  std::unique_ptr<MetricsServer> metrics = standby_->ReleaseMetrics();
  standby_->Stop();
  server_options_.store_fence_epoch = lease_->epoch();
  // Loading a large store may take longer than the lease: the lease is
  // renewed meanwhile, on this thread, while another starts the server.
  absl::StatusOr<std::unique_ptr<TrackerServer>> started;
  absl::Notification start_done;
  std::thread starter([&] {
    started = TrackerServer::Start(server_options_, std::move(metrics));
    start_done.Notify();
  });
  absl::Status lease = absl::OkStatus();
  while (lease.ok() && !start_done.WaitForNotificationWithTimeout(options_.lease_check)) {
    lease = lease_->Check();
  }
  starter.join();
  if (!started.ok()) {
    TF_LOG(ERROR) << "leading failed to start: " << started.status();
    return started.status();
  }
  {
    absl::MutexLock lock(&mutex_);
    server_ = std::move(started).value();
  }
  leading_ = true;
  while (lease.ok() && !stop_.WaitForNotificationWithTimeout(options_.lease_check)) {
    lease = lease_->Check();
  }
  if (lease.ok()) return absl::OkStatus();  // Shutdown()
  TF_LOG(ERROR) << "lost the leader lease (" << lease << "): stopping at once";
  leading_ = false;
  absl::MutexLock lock(&mutex_);
  server_->Shutdown();
  return absl::UnavailableError(absl::StrCat("lost the leader lease: ", lease.message()));
}

absl::Status TrackerReplica::Wait() {
  if (!thread_.joinable()) {  // alone: until Shutdown()
    TrackerServer* server;
    {
      absl::MutexLock lock(&mutex_);
      server = server_.get();
    }
    if (server != nullptr) server->Wait();
    return absl::OkStatus();
  }
  done_.WaitForNotification();
  absl::MutexLock lock(&mutex_);
  return ended_;
}

void TrackerReplica::Shutdown() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
  if (standby_ != nullptr) standby_->Stop();
  absl::MutexLock lock(&mutex_);
  if (server_ != nullptr) server_->Shutdown();
}

TrackerReplica::~TrackerReplica() { Shutdown(); }

}  // namespace tunefleet
