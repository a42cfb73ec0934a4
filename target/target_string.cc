#include "target/target_string.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "target/arch_registry.h"

namespace tunefleet {
namespace {

constexpr char kNvptxTriple[] = "nvptx64-nvidia-cuda";

const std::vector<std::string>& AcceptedOptions(TargetKind kind) {
  static const std::vector<std::string>* const llvm =
      new std::vector<std::string>{"-mtriple", "-mcpu", "-mattr", "-keys", "-device", "-num-cores"};
  static const std::vector<std::string>* const cuda =
      new std::vector<std::string>{"-mcpu",
                                   "-arch",
                                   "-max_threads_per_block",
                                   "-max_shared_memory_per_block",
                                   "-registers_per_block",
                                   "-thread_warp_size",
                                   "-keys",
                                   "-device",
                                   "-num-cores"};
  return kind == TargetKind::kCuda ? *cuda : *llvm;
}

// Reads one string's options; keeps the original text for error messages.
class TargetStringParser {
 public:
  explicit TargetStringParser(absl::string_view target) : target_(target) {}

  [[nodiscard]] absl::StatusOr<TargetString> Parse() {
    std::vector<std::string> words = absl::StrSplit(target_, ' ', absl::SkipWhitespace());
    parsed_.original = std::string(target_);
    if (words.empty() || (words[0] != "llvm" && words[0] != "cuda")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unsupported target \"", target_,
          "\": it must start with \"llvm\" (e.g. \"llvm -mcpu=native\") or \"cuda\" (e.g. "
          "\"cuda -mcpu=sm_90\")"));
    }
    const TargetKind written_kind = words[0] == "cuda" ? TargetKind::kCuda : TargetKind::kLlvm;
    for (size_t i = 1; i < words.size(); ++i) {
      if (absl::Status s = ReadOption(written_kind, words[i]); !s.ok()) return s;
    }
    if (written_kind == TargetKind::kCuda) {
      parsed_.triple = kNvptxTriple;
    } else if (absl::StartsWith(parsed_.triple, "nvptx64")) {
      // "llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90" means "cuda -mcpu=sm_90".
      if (!parsed_.mattrs.empty()) return Error("-mattr is not supported for CUDA targets");
    } else {
      return std::move(parsed_);
    }
    parsed_.kind = TargetKind::kCuda;
    if (parsed_.mcpu.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target \"", target_,
          "\" needs -mcpu=sm_NN (the device's compute capability, e.g. sm_90 for H100/H200; "
          "`tunefleet devices` shows what each GPU agent reports)"));
    }
    if (!absl::StartsWith(parsed_.mcpu, "sm_") ||
        !absl::SimpleAtoi(absl::string_view(parsed_.mcpu).substr(3), &parsed_.sm) ||
        parsed_.sm <= 0) {
      return Error(absl::StrCat(arch_option_, " needs sm_NN, got \"", parsed_.mcpu, "\""));
    }
    return std::move(parsed_);
  }

 private:
  [[nodiscard]] absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target_, "\": ", what));
  }

  [[nodiscard]] absl::Status ReadOption(TargetKind kind, const std::string& word) {
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    const std::vector<std::string>& accepted = AcceptedOptions(kind);
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end()) {
      return Error(absl::StrCat("unknown option \"", name, "\" (accepted for ",
                                kind == TargetKind::kCuda ? "cuda" : "llvm",
                                " targets: ", absl::StrJoin(accepted, ", "), ")"));
    }
    // -arch is TVM's other name for a GPU's -mcpu.
    const std::string field = name == "-arch" ? "-mcpu" : name;
    if (!seen_.insert(field).second) {
      return Error(absl::StrCat("option ", name, " is given twice (or with -arch and -mcpu)"));
    }
    const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (value.empty())
      return Error(absl::StrCat("option ", name, " needs a value (", name, "=...)"));

    auto positive = [&](int64_t* out) -> absl::Status {
      if (!absl::SimpleAtoi(value, out) || *out <= 0) {
        return Error(absl::StrCat("\"", word, "\" needs a positive integer"));
      }
      return absl::OkStatus();
    };
    if (field == "-mtriple") {
      if (FindArch(value) == nullptr) {
        return Error(
            absl::StrCat("unknown triple \"", value, "\" (supported: ", SupportedTriples(), ")"));
      }
      parsed_.triple = value;
    } else if (field == "-mcpu") {
      parsed_.mcpu = value;
      arch_option_ = name;
    } else if (field == "-mattr") {
      for (absl::string_view attr : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (attr.size() < 2 || (attr[0] != '+' && attr[0] != '-')) {
          return Error(
              absl::StrCat("-mattr entry \"", attr, "\" must look like +feature or -feature"));
        }
        parsed_.mattrs.emplace_back(attr);
      }
    } else if (field == "-keys") {
      parsed_.keys = absl::StrSplit(value, ',');
      for (const std::string& key : parsed_.keys) {
        if (key.empty()) return Error(absl::StrCat("-keys=", value, " has an empty key"));
      }
    } else if (field == "-device") {
      parsed_.device = value;
    } else if (field == "-num-cores") {
      return positive(&parsed_.num_cores);
    } else if (field == "-max_threads_per_block") {
      return positive(&parsed_.max_threads_per_block);
    } else if (field == "-max_shared_memory_per_block") {
      return positive(&parsed_.max_shared_memory_per_block);
    } else if (field == "-registers_per_block") {
      return positive(&parsed_.registers_per_block);
    } else if (field == "-thread_warp_size") {
      return positive(&parsed_.thread_warp_size);
    }
    return absl::OkStatus();
  }

  const absl::string_view target_;
  TargetString parsed_;
  absl::flat_hash_set<std::string> seen_;
  std::string arch_option_ = "-mcpu";  // how the string named the GPU architecture
};

}  // namespace

[[nodiscard]] absl::StatusOr<TargetString> ParseTargetString(absl::string_view target) {
  return TargetStringParser(target).Parse();
}

bool IsCudaTargetString(absl::string_view target) {
  std::vector<absl::string_view> words = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  if (words.empty()) return false;
  if (words[0] == "cuda") return true;
  for (absl::string_view word : words) {
    if (absl::StartsWith(word, "-mtriple=nvptx64")) return true;
  }
  return false;
}

std::string WithNativeCpu(absl::string_view target, const std::string& cpu) {
  if (cpu.empty() || !absl::StrContains(target, "-mcpu=native")) return std::string(target);
  std::vector<std::string> words = absl::StrSplit(target, ' ', absl::SkipEmpty());
  for (std::string& word : words) {
    if (word == "-mcpu=native") word = "-mcpu=" + cpu;
  }
  return absl::StrJoin(words, " ");
}

}  // namespace tunefleet
