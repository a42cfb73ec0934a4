// Readers for the JSON argument objects of workloads, so every workload words
// its InvalidArgument errors the same way: "<op>: argument \"K\" = -1 is
// outside [1, 1048576]", "<op>: unknown argument \"Q\" (accepted: ...)".
#ifndef TUNEFLEET_TUNER_CORE_WORKLOADS_JSON_ARGS_H_
#define TUNEFLEET_TUNER_CORE_WORKLOADS_JSON_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace json_args {

// Largest accepted tensor dimension (as for dense).
inline constexpr int64_t kMaxDim = int64_t{1} << 20;
// Largest accepted tensor (4 TiB of fp32): keeps element counts and byte
// sizes far from int64 overflow whatever the dimensions multiply to.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// InvalidArgument unless `args` is a JSON object whose keys are all in
// `accepted`; the message for an unknown key lists the accepted ones.
[[nodiscard]] absl::Status CheckObjectWithKeys(absl::string_view op, const nlohmann::json& args,
                                               const std::vector<std::string>& accepted);

// True when `args` (an object) has `key`.
bool Has(const nlohmann::json& args, const std::string& key);

// `value` (found under `key`) as an integer in [min, max].
[[nodiscard]] absl::StatusOr<int64_t> IntValue(absl::string_view op, const std::string& key,
                                               const nlohmann::json& value, int64_t min,
                                               int64_t max);

// Required integer argument in [min, max].
[[nodiscard]] absl::StatusOr<int64_t> ReadInt(absl::string_view op, const nlohmann::json& args,
                                              const std::string& key, int64_t min, int64_t max);

// Optional integer argument in [min, max]; `default_value` when absent.
[[nodiscard]] absl::StatusOr<int64_t> ReadOptionalInt(absl::string_view op,
                                                      const nlohmann::json& args,
                                                      const std::string& key, int64_t default_value,
                                                      int64_t min, int64_t max);

// An integer or a list of integers, each in [min, max], under `key`; the list
// length must be one of `lengths`. An integer reads as a list of one.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReadIntOrList(absl::string_view op,
                                                                 const nlohmann::json& args,
                                                                 const std::string& key,
                                                                 const std::vector<size_t>& lengths,
                                                                 int64_t min, int64_t max);

// Optional string argument that must be one of `allowed`; `default_value`
// when absent.
[[nodiscard]] absl::StatusOr<std::string> ReadChoice(absl::string_view op,
                                                     const nlohmann::json& args,
                                                     const std::string& key,
                                                     const std::string& default_value,
                                                     const std::vector<std::string>& allowed);

// InvalidArgument naming the tensor when one has more than kMaxElements.
[[nodiscard]] absl::Status CheckTensorSizes(absl::string_view op,
                                            const std::vector<TensorArg>& tensors);

}  // namespace json_args
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_WORKLOADS_JSON_ARGS_H_
