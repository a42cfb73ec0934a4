// Build time per candidate on this x86 builder: the host target beside
// AArch64 (RK3399's cortex-a72 big cores), on the same random configs.
//
//   bazel build //bench:build_bench && bazel-bin/bench/build_bench --json /tmp/build.json
//
// Per workload (dense 512^3 with dense_pack.x86, ResNet-18's 64->64 56x56 3x3
// conv with conv2d_nchwc.x86 in the NCHWc layout), --configs random configs
// are drawn that both targets take (a config either target refuses is
// skipped for both, and counted). Each config is built for the host,
// then for AArch64, one at a time on one thread (what one builder slot
// does), after an untimed warm-up build per target. Reported per target:
// mean, median and p90 of BuildTimings::total_seconds, and the mean of each
// stage. A second section builds further random configs for the host alone,
// with every vector width the host takes (what an x86 job's candidates cost).
// The CPU time other processes took during the run is reported beside the
// figures (builds are wall-timed; a busy neighbour inflates them).
// Each host build is made twice, interleaved: lld in the builder's process
// (the default) and ld.lld as a child process (LinkOptions::in_process
// false, what every build did before), so the link's cost is reported
// both ways from the same run.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_main.h"
#include "bench/bench_report.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

ABSL_FLAG(int, configs, 60, "random configs per workload built for both targets");
ABSL_FLAG(int, host_only_configs, 60,
          "further random configs per workload built for the host only");
ABSL_FLAG(std::string, aarch64_target, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
          "the AArch64 target string");
ABSL_FLAG(uint64_t, seed, 1, "config sampling seed");
ABSL_FLAG(std::string, json, "", "write the figures here as JSON");

namespace tunefleet {
namespace {

struct Case {
  std::string label;
  std::string template_name;
  nlohmann::json args;
};

// Build timings of the candidates of one target.
struct Samples {
  std::vector<BuildTimings> timings;
  int rejected = 0;  // INSTANTIATION_ERROR

  nlohmann::json Summary() const {
    std::vector<double> totals;
    for (const BuildTimings& t : timings) totals.push_back(t.total_seconds);
    std::sort(totals.begin(), totals.end());
    auto mean_of = [&](double BuildTimings::* stage) {
      double sum = 0;
      for (const BuildTimings& t : timings) sum += t.*stage;
      return timings.empty() ? 0.0 : sum / timings.size();
    };
    auto quantile = [&](double q) {
      if (totals.empty()) return 0.0;
      return totals[std::min(totals.size() - 1, static_cast<size_t>(q * totals.size()))];
    };
    const double median = totals.empty() ? 0.0
                          : totals.size() % 2 == 1
                              ? totals[totals.size() / 2]
                              : (totals[totals.size() / 2 - 1] + totals[totals.size() / 2]) / 2;
    return {{"built", timings.size()},
            {"rejected_at_instantiation", rejected},
            {"mean_s", mean_of(&BuildTimings::total_seconds)},
            {"median_s", median},
            {"p90_s", quantile(0.9)},
            {"stage_mean_s",
             {{"instantiate", mean_of(&BuildTimings::instantiate_seconds)},
              {"lower", mean_of(&BuildTimings::lower_seconds)},
              {"codegen", mean_of(&BuildTimings::codegen_seconds)},
              {"optimize", mean_of(&BuildTimings::optimize_seconds)},
              {"emit", mean_of(&BuildTimings::emit_seconds)},
              {"link", mean_of(&BuildTimings::link_seconds)}}}};
  }
};

// CPU seconds the whole machine spent busy (all cores), from /proc/stat.
double MachineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) / sysconf(_SC_CLK_TCK);
}

// CPU seconds of this process and its reaped children (ld.lld).
double OwnCpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage;
    getrusage(who, &usage);
    total += usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
             usage.ru_stime.tv_usec / 1e6;
  }
  return total;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "build_bench: %s\n", message.c_str());
  return 1;
}

int Run() {
  const std::string host_string = HostTargetString();
  const std::string arm_string = absl::GetFlag(FLAGS_aarch64_target);
  absl::StatusOr<TargetSpec> host = ParseTarget(host_string);
  absl::StatusOr<TargetSpec> arm = ParseTarget(arm_string);
  if (!host.ok()) return Fail(host.status().ToString());
  if (!arm.ok()) return Fail(arm.status().ToString());

  const std::vector<Case> cases = {
      {"dense 512x512x512",
       "dense_pack.x86",
       {{"M", 512}, {"N", 512}, {"K", 512}, {"layout", "NK"}}},
      {"conv2d resnet18 64x56x56 -> 64, 3x3, pad 1, NCHWc",
       "conv2d_nchwc.x86",
       {{"N", 1},
        {"C", 64},
        {"H", 56},
        {"W", 56},
        {"K", 64},
        {"R", 3},
        {"S", 3},
        {"padding", 1},
        {"layout", "NCHWc"}}},
  };
  nlohmann::json report = {{"benchmark", "build time per candidate, x86 host vs AArch64"},
                           {"host_target", host_string},
                           {"aarch64_target", arm_string},
                           {"threads", 1},
                           {"seed", absl::GetFlag(FLAGS_seed)},
                           {"cases", nlohmann::json::array()}};
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  const double busy_start = MachineBusySeconds();
  const double own_start = OwnCpuSeconds();
  for (const Case& c : cases) {
    absl::StatusOr<const Template*> tmpl = FindTemplate(c.template_name);
    if (!tmpl.ok()) return Fail(tmpl.status().ToString());
    absl::StatusOr<std::unique_ptr<Workload>> workload =
        MakeWorkload((*tmpl)->workload_name(), c.args);
    if (!workload.ok()) return Fail(workload.status().ToString());
    absl::StatusOr<ConfigSpace> space = (*tmpl)->DefineSpace(**workload);
    if (!space.ok()) return Fail(space.status().ToString());
    auto draw = [&]() -> absl::StatusOr<Config> {
      return space->Get(std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng));
    };

    // Warm-up: LLVM's one-time initialisation is not a candidate's cost.
    for (const TargetSpec* target : {&*host, &*arm}) {
      for (int built = 0, tries = 0; built == 0 && tries < 100; ++tries) {
        absl::StatusOr<Config> config = draw();
        if (config.ok() && BuildCandidate(**tmpl, **workload, *config, *target).ok()) ++built;
      }
    }

    BuildOptions child_link;
    child_link.link.in_process = false;
    Samples same_host, same_arm, host_only, host_child_link;
    int skipped = 0, failed = 0;
    const int wanted = absl::GetFlag(FLAGS_configs);
    for (int tries = 0; static_cast<int>(same_arm.timings.size()) < wanted && tries < wanted * 20;
         ++tries) {
      absl::StatusOr<Config> config = draw();
      if (!config.ok()) return Fail(config.status().ToString());
      BuildResult on_host = BuildCandidate(**tmpl, **workload, *config, *host);
      BuildResult on_arm = BuildCandidate(**tmpl, **workload, *config, *arm);
      if (on_host.ok() && on_arm.ok()) {
        BuildResult child = BuildCandidate(**tmpl, **workload, *config, *host, child_link);
        if (!child.ok()) return Fail(absl::StrCat("child-process link: ", child.error_msg));
        same_host.timings.push_back(on_host.timings);
        same_arm.timings.push_back(on_arm.timings);
        host_child_link.timings.push_back(child.timings);
        continue;
      }
      if (on_arm.error_no == MeasureErrorNo::kInstantiationError) ++same_arm.rejected;
      if (on_host.error_no == MeasureErrorNo::kInstantiationError) ++same_host.rejected;
      ++skipped;
      for (const BuildResult* r : {&on_host, &on_arm}) {
        if (!r->ok() && r->error_no != MeasureErrorNo::kInstantiationError) {
          ++failed;
          std::fprintf(stderr, "build_bench: %s %s: %s\n", c.template_name.c_str(),
                       MeasureErrorName(r->error_no), r->error_msg.c_str());
        }
      }
    }
    for (int i = 0; i < absl::GetFlag(FLAGS_host_only_configs); ++i) {
      absl::StatusOr<Config> config = draw();
      if (!config.ok()) return Fail(config.status().ToString());
      BuildResult on_host = BuildCandidate(**tmpl, **workload, *config, *host);
      if (on_host.ok()) {
        host_only.timings.push_back(on_host.timings);
      } else if (on_host.error_no == MeasureErrorNo::kInstantiationError) {
        ++host_only.rejected;
      }
    }

    const nlohmann::json host_summary = same_host.Summary();
    const nlohmann::json arm_summary = same_arm.Summary();
    const nlohmann::json child_summary = host_child_link.Summary();
    const double ratio =
        host_summary["mean_s"].get<double>() > 0
            ? arm_summary["mean_s"].get<double>() / host_summary["mean_s"].get<double>()
            : 0.0;
    report["cases"].push_back({{"case", c.label},
                               {"template", c.template_name},
                               {"workload_args", c.args},
                               {"same_configs",
                                {{"host", host_summary},
                                 {"host_ld_lld_child_process", child_summary},
                                 {"aarch64", arm_summary},
                                 {"aarch64_over_host_mean", ratio},
                                 {"configs_skipped", skipped},
                                 {"build_failures", failed}}},
                               {"host_any_config", host_only.Summary()}});
    std::printf(
        "%-52s  %3zu configs  host %6.1f ms mean %6.1f ms median | aarch64 %6.1f ms mean %6.1f ms "
        "median | x%.2f  (skipped %d: aarch64 rejected %d, host rejected %d)\n",
        c.label.c_str(), same_arm.timings.size(), host_summary["mean_s"].get<double>() * 1e3,
        host_summary["median_s"].get<double>() * 1e3, arm_summary["mean_s"].get<double>() * 1e3,
        arm_summary["median_s"].get<double>() * 1e3, ratio, skipped, same_arm.rejected,
        same_host.rejected);
    std::printf(
        "%-52s  host link: lld in process %5.1f ms mean, ld.lld child process %5.1f ms mean; "
        "build %6.1f ms mean against %6.1f ms\n",
        "", host_summary["stage_mean_s"]["link"].get<double>() * 1e3,
        child_summary["stage_mean_s"]["link"].get<double>() * 1e3,
        host_summary["mean_s"].get<double>() * 1e3, child_summary["mean_s"].get<double>() * 1e3);
    std::printf("%-52s  host, any vector width: %zu built, %6.1f ms mean, %6.1f ms median\n", "",
                host_only.timings.size(), host_only.Summary()["mean_s"].get<double>() * 1e3,
                host_only.Summary()["median_s"].get<double>() * 1e3);
    std::fflush(stdout);
    if (failed > 0) return Fail(absl::StrCat(failed, " builds failed other than at instantiation"));
  }
  // Builds are timed one at a time; another process busy meanwhile (a
  // compile on a 2-core machine) inflates them. Reported, not corrected.
  const double others = (MachineBusySeconds() - busy_start) - (OwnCpuSeconds() - own_start);
  report["other_processes_cpu_s"] = std::max(0.0, others);
  std::printf("CPU time of other processes during the run: %.1f s\n", std::max(0.0, others));
  bench::WriteJsonReport(absl::GetFlag(FLAGS_json), report).IgnoreError();
  return 0;
}

}  // namespace

int bench::BenchMain() { return Run(); }

}  // namespace tunefleet
