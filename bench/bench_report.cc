#include "bench/bench_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"

namespace tunefleet {
namespace bench {

using Json = nlohmann::json;

double Geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / v.size());
}

Json RatioSummary(const std::vector<double>& ratios, const std::vector<int>& indices,
                  const std::vector<std::string>& labels) {
  Json j = {{"tasks_compared", ratios.size()}};
  if (ratios.empty()) return j;
  const size_t worst = std::min_element(ratios.begin(), ratios.end()) - ratios.begin();
  j["geomean_ratio"] = Geomean(ratios);
  j["min_ratio"] = ratios[worst];
  j["min_ratio_task"] = indices[worst];
  j["min_ratio_label"] = labels[worst];
  return j;
}

double OtherBusyCores(double seconds) {
  auto read = [](double* busy, double* total) {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    stat >> cpu;
    *busy = *total = 0;
    for (int i = 0; i < 8; ++i) {
      double v = 0;
      if (!(stat >> v)) return false;
      *total += v;
      if (i != 3 && i != 4) *busy += v;  // not idle, not iowait
    }
    return cpu == "cpu";
  };
  double busy0, total0, busy1, total1;
  if (!read(&busy0, &total0)) return -1;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  if (!read(&busy1, &total1) || total1 <= total0) return -1;
  return (busy1 - busy0) / (total1 - total0) * std::thread::hardware_concurrency();
}

FmaPeak MeasureFmaPeak(int threads, int rounds, const std::string& isa) {
  FmaPeak peak;
  peak.json = RunJsonCommand(
      absl::StrCat(ExeDir(), "/cpu_fma_peak ", threads, " ", rounds, isa == "avx2" ? " avx2" : ""));
  if (peak.json.is_object() && peak.json.contains("gflops") && peak.json["gflops"].is_number()) {
    peak.gflops = peak.json["gflops"].get<double>();
    peak.isa = peak.json.value("isa", "");
  } else if (!peak.json.is_object() || !peak.json.contains("error")) {
    peak.json = {{"error", absl::StrCat("cpu_fma_peak printed ", peak.json.dump())}};
  }
  return peak;
}

double FractionOfPeak(double gflops, const FmaPeak& peak) {
  return peak.gflops > 0 ? gflops / peak.gflops : 0;
}

[[nodiscard]] absl::Status WriteJsonReport(const std::string& path, const Json& report) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream file(path);
  file << report.dump(2) << "\n";
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace bench
}  // namespace tunefleet
