#include "tracker/tracker_server.h"

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/signing.h"
#include "common/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "rpc/plaintext_policy.h"
#include "tracker/store/open_store.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFileToString(path, kMaxPemFileBytes);
}

// What an off-loopback tracker insists on beyond tokens and TLS: tokens
// bound to certificate identities, and signed artifacts.
[[nodiscard]] absl::Status CheckExposedSettings(const TrackerServerOptions& options,
                                                const TokenSet& tokens) {
  if (!options.allow_unbound_tokens) {
    if (const std::vector<int> unbound = tokens.UnboundEntries(); !unbound.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to listen on ", options.listen, ": ", unbound.size(), " token(s) in ",
          options.token_file, " (entries ", absl::StrJoin(unbound, ", "),
          ") are not bound to a client certificate identity; add identity=<URI SAN> to each "
          "line (tunefleet token new --identity ...), or pass --allow_unbound_tokens"));
    }
  }
  if (options.builder_keys_file.empty() && !options.allow_unsigned_artifacts) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", options.listen,
        " without pinned builder keys: agents would load unsigned code. Pass --builder_keys "
        "(tunefleet keys new), or --allow_unsigned_artifacts"));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TrackerServerCredentials(
    const TrackerServerOptions& options) {
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  TF_ASSIGN_OR_RETURN(std::string cert, ReadFile(options.tls_cert));
  TF_ASSIGN_OR_RETURN(std::string key, ReadFile(options.tls_key));
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!options.tls_client_ca.empty()) {
    TF_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile(options.tls_client_ca));
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<TokenSet>> LoadCheckedTokens(
    const TrackerServerOptions& options) {
  const bool loopback = IsLoopbackAddress(options.listen);
  std::unique_ptr<TokenSet> tokens;
  if (!options.token_file.empty()) {
    TF_ASSIGN_OR_RETURN(TokenSet loaded, LoadTokenFile(options.token_file));
    tokens = std::make_unique<TokenSet>(std::move(loaded));
  } else if (!loopback) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", options.listen,
        " without authentication: agents run the code they are sent. Pass --token_file "
        "(and TLS), or listen on 127.0.0.1"));
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (options.tls_cert.empty() && !loopback) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing to listen on ", options.listen,
                     " in plaintext: tokens would travel in clear. "
                     "Pass --tls_cert and --tls_key, or listen on 127.0.0.1"));
  }
  if (tokens != nullptr && tokens->UnboundEntries().size() < tokens->size() &&
      options.tls_client_ca.empty()) {
    return absl::FailedPreconditionError(
        "the token file binds tokens to client certificate identities, but the tracker asks "
        "for no client certificates: pass --tls_client_ca");
  }
  if (!loopback) TF_RETURN_IF_ERROR(CheckExposedSettings(options, *tokens));
  return tokens;
}

absl::StatusOr<std::unique_ptr<TrackerServer>> TrackerServer::Start(
    TrackerServerOptions options, std::unique_ptr<MetricsServer> metrics) {
  std::unique_ptr<TrackerServer> t(new TrackerServer());
  t->options_ = options;
  TF_ASSIGN_OR_RETURN(t->tokens_, LoadCheckedTokens(options));
  if (!options.builder_keys_file.empty()) {
    TF_ASSIGN_OR_RETURN(options.scheduler.builder_keys, LoadPinnedKeys(options.builder_keys_file));
    TF_LOG(INFO) << "pinned " << options.scheduler.builder_keys.texts().size()
                 << " builder signing key(s) from " << options.builder_keys_file
                 << ": agents load only artifacts they signed";
  }
  OpenStoreOptions store_options;
  store_options.sqlite_synchronous_full = options.store_synchronous_full;
  store_options.postgres_fence_epoch = options.store_fence_epoch;
  TF_ASSIGN_OR_RETURN(t->store_, OpenStore(options.store_path, store_options));
  t->metrics_ = std::make_unique<TrackerMetrics>();
  if (metrics != nullptr) {
    metrics->Add(t->metrics_->registry());
    t->metrics_server_ = std::move(metrics);
  } else if (!options.metrics_listen.empty()) {
    TF_ASSIGN_OR_RETURN(t->metrics_server_,
                        StartMetricsServer(options.metrics_listen, {t->metrics_->registry()}));
  }
  if (t->metrics_server_ != nullptr) t->metrics_port_ = t->metrics_server_->port();
  TF_ASSIGN_OR_RETURN(t->scheduler_, Scheduler::Create(t->store_.get(), t->metrics_.get(),
                                                       options.scheduler, &t->clock_));
  t->gateway_ = std::make_unique<WorkerGatewayService>(t->scheduler_.get(), t->tokens_.get(),
                                                       t->metrics_.get());
  t->jobs_ = std::make_unique<JobServiceImpl>(t->scheduler_.get(), t->tokens_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  TF_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                      TrackerServerCredentials(options));
  builder.AddListeningPort(options.listen, credentials, &t->port_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.RegisterService(t->gateway_.get());
  builder.RegisterService(t->jobs_.get());
  t->server_ = builder.BuildAndStart();
  if (t->server_ == nullptr || t->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.listen, " (address in use, or not an address of this host)"));
  }
  // Serving for "" (what Kubernetes' gRPC probe asks by default) and for
  // each service by name.
  grpc::HealthCheckServiceInterface* health = t->server_->GetHealthCheckService();
  health->SetServingStatus(true);
  health->SetServingStatus(proto::WorkerGateway::service_full_name(), true);
  health->SetServingStatus(proto::JobService::service_full_name(), true);
  t->ticker_ = std::thread([p = t.get()] { p->TickLoop(); });
  TF_LOG(INFO) << "tracker listening on " << options.listen << " (port " << t->port_ << ")"
               << (t->tokens_ ? ", tokens required" : ", no authentication (loopback)") << ", "
               << DescribeStore(options.store_path)
               << (t->metrics_server_ ? ", metrics on " + t->metrics_server_->url() : "");
  return t;
}

void TrackerServer::TickLoop() {
  while (!stopping_) {
    scheduler_->Tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void TrackerServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

void TrackerServer::Shutdown() {
  if (stopping_.exchange(true)) return;
  if (jobs_ != nullptr) jobs_->Shutdown();
  if (server_ != nullptr) {
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
  if (ticker_.joinable()) ticker_.join();
}

TrackerServer::~TrackerServer() { Shutdown(); }

}  // namespace tunefleet
