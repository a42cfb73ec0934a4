#include "metrics/metrics_server.h"

#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "metrics/process_collector.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace tunefleet {

MetricsServer::MetricsServer(std::unique_ptr<prometheus::Exposer> exposer,
                             std::vector<std::shared_ptr<prometheus::Collectable>> collectables,
                             int port, std::string url)
    : exposer_(std::move(exposer)),
      collectables_(std::move(collectables)),
      port_(port),
      url_(std::move(url)) {}

void MetricsServer::Add(std::shared_ptr<prometheus::Collectable> collectable) {
  exposer_->RegisterCollectable(collectable, kMetricsPath);
  collectables_.push_back(std::move(collectable));
}

// The exposer stops its threads before the collectables go.
MetricsServer::~MetricsServer() { exposer_.reset(); }

[[nodiscard]] absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetricsServer(
    const std::string& bind_address,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  const size_t colon = bind_address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == bind_address.size()) {
    return absl::InvalidArgumentError(absl::StrCat("metrics address '", bind_address,
                                                   "' is not host:port (e.g. 127.0.0.1:9464)"));
  }
  for (const auto& collectable : collectables) {
    if (collectable == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics server on ", bind_address, ": a null collectable"));
    }
  }
  collectables.insert(collectables.begin(), std::make_shared<ProcessCollector>());
  // prometheus-cpp (civetweb underneath) reports bind failures by throwing.
  try {
    auto exposer = std::make_unique<prometheus::Exposer>(bind_address, /*num_threads=*/2);
    for (const auto& collectable : collectables) {
      exposer->RegisterCollectable(collectable, kMetricsPath);
    }
    const std::vector<int> ports = exposer->GetListeningPorts();
    if (ports.empty()) {
      return absl::UnavailableError(
          absl::StrCat("metrics server on ", bind_address, ": no port bound"));
    }
    std::string url =
        absl::StrCat("http://", bind_address.substr(0, colon), ":", ports.front(), kMetricsPath);
    return std::make_unique<MetricsServer>(std::move(exposer), std::move(collectables),
                                           ports.front(), std::move(url));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics server: cannot listen on ", bind_address, ": ", e.what()));
  } catch (...) {
    return absl::UnavailableError(absl::StrCat("metrics server: cannot listen on ", bind_address));
  }
}

}  // namespace tunefleet
