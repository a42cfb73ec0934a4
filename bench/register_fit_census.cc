// How many configs register_fit.h refuses, for reports on the rule:
//
//   register_fit_census records FILE...   successful records whose config
//       its own target would now refuse (per template), with each refusal
//   register_fit_census spaces TARGET...  per target and CPU template, the
//       share of a representative workload's instantiable configs refused
//       (dense 512^3 NK, ResNet-18's 56x56 64->64 3x3 conv, MobileNet-v2's
//       112x112x32 depthwise, batch_matmul 8x128^3); spaces too large to
//       walk are sampled at random (seeded: the same sample every run)
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "toolchain/codegen/target.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/register_fit.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

int Records(const std::vector<std::string>& paths) {
  std::map<std::string, std::pair<int, int>> checked_refused;  // by template
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      absl::StatusOr<Record> record = Record::FromLine(line);
      if (!record.ok() || record->result.error_no != MeasureErrorNo::kNoError) continue;
      absl::StatusOr<std::unique_ptr<Task>> task = Task::Make(
          record->task_name, record->workload_name, record->workload_args, record->target);
      absl::StatusOr<TargetSpec> target = ParseTarget(record->target);
      if (!task.ok() || !target.ok()) continue;
      absl::StatusOr<Config> config = (*task)->space().FromJson(record->config);
      if (!config.ok()) continue;
      auto& [checked, refused] = checked_refused[record->task_name];
      ++checked;
      const absl::Status fits =
          CheckRegisterTileFits((*task)->tmpl(), (*task)->workload(), *config, *target);
      if (!fits.ok()) {
        ++refused;
        std::printf("refused %s %s: %s\n", record->task_name.c_str(), config->ToString().c_str(),
                    std::string(fits.message()).c_str());
      }
    }
  }
  for (const auto& [name, counts] : checked_refused) {
    std::printf("%-28s successful records %6d  refused %d\n", name.c_str(), counts.first,
                counts.second);
  }
  return 0;
}

int Spaces(const std::vector<std::string>& targets) {
  const nlohmann::json dense = {{"M", 512}, {"N", 512}, {"K", 512}, {"layout", "NK"}};
  const nlohmann::json conv = {{"N", 1}, {"C", 64}, {"H", 56},      {"W", 56},          {"K", 64},
                               {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHWc"}};
  const nlohmann::json depthwise = {{"N", 1}, {"C", 32}, {"H", 112},     {"W", 112},
                                    {"R", 3}, {"S", 3},  {"padding", 1}, {"layout", "NCHWc"}};
  const nlohmann::json bmm = {{"B", 8}, {"M", 128}, {"N", 128}, {"K", 128}};
  const struct {
    const char* tmpl;
    const char* workload;
    const nlohmann::json& args;
  } cases[] = {{"dense_pack.x86", "dense", dense},
               {"dense_gemm.x86", "dense", dense},
               {"batch_matmul_pack.x86", "batch_matmul", bmm},
               {"conv2d_nchwc.x86", "conv2d_nchw", conv},
               {"depthwise_conv2d_nchwc.x86", "depthwise_conv2d_nchw", depthwise}};
  constexpr int64_t kMaxWalked = 20000;
  for (const std::string& target_string : targets) {
    absl::StatusOr<TargetSpec> target = ParseTarget(target_string);
    if (!target.ok()) {
      std::fprintf(stderr, "%s\n", target.status().ToString().c_str());
      return 1;
    }
    for (const auto& c : cases) {
      absl::StatusOr<std::unique_ptr<Task>> task =
          Task::Make(c.tmpl, c.workload, c.args, target_string);
      if (!task.ok()) {
        std::fprintf(stderr, "%s\n", task.status().ToString().c_str());
        return 1;
      }
      const int64_t size = (*task)->space().size();
      const bool walk = size <= kMaxWalked;
      // Not an even stride: it would alias with the knobs' mixed radix.
      std::mt19937_64 rng(42);
      std::uniform_int_distribution<int64_t> any(0, size - 1);
      int64_t instantiable = 0, refused = 0;
      int64_t refused_new = 0;  // of a width codegen takes (else refused anyway)
      for (int64_t i = 0; i < (walk ? size : kMaxWalked); ++i) {
        absl::StatusOr<Config> config = (*task)->space().Get(walk ? i : any(rng));
        if (!config.ok()) return 1;
        if (!(*task)->tmpl().Instantiate((*task)->workload(), *config).ok()) continue;
        ++instantiable;
        if (CheckRegisterTileFits((*task)->tmpl(), (*task)->workload(), *config, *target).ok()) {
          continue;
        }
        ++refused;
        absl::StatusOr<RegisterDemand> demand =
            (*task)->tmpl().RegisterDemandOf((*task)->workload(), *config);
        refused_new += demand.ok() && demand->lanes * 32 <= target->max_vector_bits;
      }
      std::printf(
          "%-48s %-28s space %9lld  %s %6lld instantiable, %6lld refused (%.1f%%), %6lld of them "
          "of a width codegen takes\n",
          target_string.c_str(), c.tmpl, static_cast<long long>(size), walk ? "walked " : "sampled",
          static_cast<long long>(instantiable), static_cast<long long>(refused),
          instantiable ? 100.0 * refused / instantiable : 0.0, static_cast<long long>(refused_new));
    }
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet

int main(int argc, char** argv) {
  const std::vector<std::string> rest(argv + (argc > 1 ? 2 : 1), argv + argc);
  if (argc > 1 && std::string(argv[1]) == "records") return tunefleet::Records(rest);
  if (argc > 1 && std::string(argv[1]) == "spaces") return tunefleet::Spaces(rest);
  std::fprintf(stderr, "usage: %s records FILE... | spaces TARGET...\n", argv[0]);
  return 2;
}
