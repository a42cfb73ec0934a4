// MetricsServer: the /metrics HTTP endpoint of every TuneFleet daemon
// (tracker, builder, device agent, tuner), in the Prometheus text format.
// Each serves the standard process metrics and tunefleet_build_info
// (process_collector.h); the tracker adds its own registry. This is the one
// place that starts prometheus-cpp's HTTP server (civetweb underneath).
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<MetricsServer> server,
//                       StartMetricsServer("127.0.0.1:9464", {tracker_metrics->registry()}));
//   TF_LOG(INFO) << "metrics on " << server->url();  // http://127.0.0.1:9464/metrics
//
// The endpoint is plain HTTP without authentication: bind it to a private
// interface.
#ifndef TUNEFLEET_METRICS_METRICS_SERVER_H_
#define TUNEFLEET_METRICS_METRICS_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace tunefleet {

// The HTTP path every daemon serves its metrics at.
inline constexpr char kMetricsPath[] = "/metrics";

// Serves its collectables at kMetricsPath until destroyed.
class MetricsServer {
 public:
  MetricsServer(std::unique_ptr<prometheus::Exposer> exposer,
                std::vector<std::shared_ptr<prometheus::Collectable>> collectables, int port,
                std::string url);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port bound (the real one when asked for port 0).
  int port() const { return port_; }
  // Serves `collectable` too, from now on (a standby tracker's server, which
  // the leader it becomes takes over with the fleet's registry).
  void Add(std::shared_ptr<prometheus::Collectable> collectable);
  // Where to scrape it: "http://<host of the bind address>:<port>/metrics".
  const std::string& url() const { return url_; }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  // The exposer holds weak pointers; these keep what it serves alive.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  int port_;
  std::string url_;
};

// Starts serving this process's metrics (ProcessCollector) and `collectables`
// (e.g. a prometheus::Registry) at kMetricsPath on `bind_address`
// ("host:port"; port 0 picks a free port). InvalidArgument if the address is
// malformed, Unavailable if it cannot be bound; both name the address.
[[nodiscard]] absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetricsServer(
    const std::string& bind_address,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_METRICS_METRICS_SERVER_H_
