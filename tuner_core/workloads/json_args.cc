#include "tuner_core/workloads/json_args.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace json_args {

[[nodiscard]] absl::Status CheckObjectWithKeys(absl::string_view op, const nlohmann::json& args,
                                               const std::vector<std::string>& accepted) {
  if (!args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": arguments must be a JSON object, got ", args.dump()));
  }
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (std::find(accepted.begin(), accepted.end(), it.key()) == accepted.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": unknown argument \"", it.key(),
                       "\" (accepted: ", absl::StrJoin(accepted, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

bool Has(const nlohmann::json& args, const std::string& key) {
  return args.find(key) != args.end();
}

[[nodiscard]] absl::StatusOr<int64_t> IntValue(absl::string_view op, const std::string& key,
                                               const nlohmann::json& value, int64_t min,
                                               int64_t max) {
  // is_number_integer() is false for 2.0 and for booleans: both are refused
  // rather than silently converted.
  if (!value.is_number_integer()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": argument \"", key, "\" must be an integer, got ", value.dump()));
  }
  // Unsigned values above int64 would wrap in get<int64_t>().
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": argument \"", key, "\" = ", value.dump(),
                                                   " is outside [", min, ", ", max, "]"));
  }
  const int64_t v = value.get<int64_t>();
  if (v < min || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": argument \"", key, "\" = ", v, " is outside [", min, ", ", max, "]"));
  }
  return v;
}

[[nodiscard]] absl::StatusOr<int64_t> ReadInt(absl::string_view op, const nlohmann::json& args,
                                              const std::string& key, int64_t min, int64_t max) {
  auto it = args.find(key);
  if (it == args.end()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": missing argument \"", key, "\""));
  }
  return IntValue(op, key, *it, min, max);
}

[[nodiscard]] absl::StatusOr<int64_t> ReadOptionalInt(absl::string_view op,
                                                      const nlohmann::json& args,
                                                      const std::string& key, int64_t default_value,
                                                      int64_t min, int64_t max) {
  auto it = args.find(key);
  if (it == args.end()) return default_value;
  return IntValue(op, key, *it, min, max);
}

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReadIntOrList(absl::string_view op,
                                                                 const nlohmann::json& args,
                                                                 const std::string& key,
                                                                 const std::vector<size_t>& lengths,
                                                                 int64_t min, int64_t max) {
  const nlohmann::json& value = args.at(key);
  if (value.is_number_integer()) {
    TF_ASSIGN_OR_RETURN(int64_t v, IntValue(op, key, value, min, max));
    return std::vector<int64_t>{v};
  }
  const bool length_ok =
      value.is_array() && std::find(lengths.begin(), lengths.end(), value.size()) != lengths.end();
  if (!length_ok) {
    std::vector<size_t> list_lengths;
    for (size_t n : lengths) {
      if (n > 1) list_lengths.push_back(n);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": argument \"", key, "\" must be an integer or a list of ",
                     absl::StrJoin(list_lengths, " or "), " integers, got ", value.dump()));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < value.size(); ++i) {
    TF_ASSIGN_OR_RETURN(int64_t v,
                        IntValue(op, absl::StrCat(key, "[", i, "]"), value[i], min, max));
    out.push_back(v);
  }
  return out;
}

[[nodiscard]] absl::StatusOr<std::string> ReadChoice(absl::string_view op,
                                                     const nlohmann::json& args,
                                                     const std::string& key,
                                                     const std::string& default_value,
                                                     const std::vector<std::string>& allowed) {
  auto it = args.find(key);
  if (it == args.end()) return default_value;
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat(op, ": argument \"", key, "\" must be \"",
                                                 absl::StrJoin(allowed, "\" or \""), "\", got ",
                                                 it->dump()));
}

[[nodiscard]] absl::Status CheckTensorSizes(absl::string_view op,
                                            const std::vector<TensorArg>& tensors) {
  for (const TensorArg& t : tensors) {
    // Multiplied with a division check first: the dimensions alone may
    // multiply past int64.
    int64_t count = 1;
    for (int64_t d : t.shape) {
      if (d > 0 && count > kMaxElements / d) {
        return absl::InvalidArgumentError(
            absl::StrCat(op, ": tensor \"", t.name, "\" of shape [", absl::StrJoin(t.shape, ","),
                         "] has more than ", kMaxElements, " elements"));
      }
      count *= d;
    }
  }
  return absl::OkStatus();
}

}  // namespace json_args
}  // namespace tunefleet
