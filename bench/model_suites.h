// The task lists model_bench tunes: the distinct conv2d tasks of ResNet-18,
// the depthwise convs of MobileNet-v2 (from the model zoo), and two
// attention-like batch matmuls, each with the reference library it is
// compared against. Use these to run or extend the model benchmark.
#ifndef TUNEFLEET_BENCH_MODEL_SUITES_H_
#define TUNEFLEET_BENCH_MODEL_SUITES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace bench {

struct BenchTask {
  std::string workload;
  nlohmann::json args;
  int num_layers = 1;
  double flops = 0;        // of one layer
  double flops_share = 0;  // of the model's listed layers (0 when not from a model)
  std::string label;       // short description for the printed line
  // FLOPs of the multiply-adds that read the input, not a zero of a conv's
  // padding (kernels skip those taps, so only these meet the FMA peak);
  // 0 when it is `flops`.
  double useful_flops = 0;
  // useful_flops / flops (1 without padding): GFLOPS (counted the model
  // zoo's way, padding taps included) times this, over the FMA peak, is the
  // share of the peak a kernel reaches.
  double UsefulShare() const { return useful_flops > 0 && flops > 0 ? useful_flops / flops : 1.0; }
};

struct Suite {
  std::string name;       // flag name
  std::string model;      // model zoo name; empty for batch_matmul
  std::string reference;  // "oneDNN" or "OpenBLAS"
  std::vector<BenchTask> tasks;
  nlohmann::json skipped = nlohmann::json::array();  // tasks of the model this suite does not tune
};

// args[key] as an integer (the workload's argument; must be present).
int64_t Arg(const nlohmann::json& args, const char* key);

// "conv2d(C=64,H=56,W=56,K=64,3x3,s1,p1)" or "dwconv(...)" for a conv task.
std::string ConvLabel(const BenchTask& t);

// The model zoo's tasks of `model` whose workload is `workload`, with
// `layout` added to their args; the model's other tasks go to
// suite.skipped. Compared against oneDNN.
[[nodiscard]] absl::StatusOr<Suite> ModelSuite(const std::string& name, const std::string& model,
                                               const std::string& workload,
                                               const std::string& layout);

// "[suite] skipping ...: only its <workload> tasks are benchmarked", naming
// the skipped tasks when at most two (ResNet-18's classifier), counting them
// otherwise; empty when the suite skips none.
std::string SkippedTasksNote(const Suite& suite);

// B=12: 128x128x64 (QK^T) and 128x64x128 (attention times V), B as [N,K];
// compared against OpenBLAS.
Suite BatchMatmulSuite();

// The suite model_bench's --suites names: resnet18, resnet50 (their conv2d
// tasks), mobilenet_conv, mobilenet_dw (MobileNet-v2's conv2d and depthwise
// tasks) or batch_matmul; InvalidArgument naming the known ones otherwise.
[[nodiscard]] absl::StatusOr<Suite> NamedSuite(absl::string_view name, const std::string& layout);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_MODEL_SUITES_H_
