#include "common/gpu_artifact.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tunefleet {
namespace {

constexpr absl::string_view kMarker = "// tunefleet-gpu-kernel ";

[[nodiscard]] absl::Status ParseDims(absl::string_view key, absl::string_view text,
                                     std::array<int64_t, 3>* dims) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  if (parts.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("GPU artifact header: ", key, "=", text,
                                                   " needs three comma-separated sizes"));
  }
  for (int i = 0; i < 3; ++i) {
    if (!absl::SimpleAtoi(parts[i], &(*dims)[i]) || (*dims)[i] < 1) {
      return absl::InvalidArgumentError(absl::StrCat("GPU artifact header: ", key, "=", text,
                                                     " has a size that is not a positive integer"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsGpuArtifact(absl::string_view bytes) { return absl::StartsWith(bytes, kMarker); }

std::string FormatGpuArtifact(const GpuLaunch& launch, absl::string_view ptx) {
  return absl::StrCat(kMarker, "entry=", launch.entry, " grid=", absl::StrJoin(launch.grid, ","),
                      " block=", absl::StrJoin(launch.block, ","),
                      " shared_bytes=", launch.shared_bytes, "\n", ptx);
}

[[nodiscard]] absl::StatusOr<GpuArtifact> ParseGpuArtifact(absl::string_view bytes) {
  if (!IsGpuArtifact(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a GPU artifact: it does not start with \"", kMarker, "\""));
  }
  const size_t newline = bytes.find('\n');
  if (newline == absl::string_view::npos) {
    return absl::InvalidArgumentError("GPU artifact: header line without a PTX module after it");
  }
  absl::string_view header = bytes.substr(kMarker.size(), newline - kMarker.size());
  GpuArtifact artifact;
  artifact.ptx = std::string(bytes.substr(newline + 1));
  bool seen_entry = false, seen_grid = false, seen_block = false, seen_shared = false;
  for (absl::string_view field : absl::StrSplit(header, ' ', absl::SkipEmpty())) {
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPU artifact header: field \"", field, "\" is not key=value"));
    }
    absl::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "entry") {
      artifact.launch.entry = std::string(value);
      seen_entry = true;
    } else if (key == "grid") {
      if (absl::Status s = ParseDims(key, value, &artifact.launch.grid); !s.ok()) return s;
      seen_grid = true;
    } else if (key == "block") {
      if (absl::Status s = ParseDims(key, value, &artifact.launch.block); !s.ok()) return s;
      seen_block = true;
    } else if (key == "shared_bytes") {
      if (!absl::SimpleAtoi(value, &artifact.launch.shared_bytes) ||
          artifact.launch.shared_bytes < 0) {
        return absl::InvalidArgumentError(absl::StrCat("GPU artifact header: shared_bytes=", value,
                                                       " is not a non-negative integer"));
      }
      seen_shared = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("GPU artifact header: unknown field \"", key, "\""));
    }
  }
  if (!seen_entry || artifact.launch.entry.empty() || !seen_grid || !seen_block || !seen_shared) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU artifact header \"", header, "\" must give entry, grid, block and shared_bytes"));
  }
  if (artifact.ptx.find(".entry") == std::string::npos) {
    return absl::InvalidArgumentError("GPU artifact: the PTX module declares no .entry");
  }
  return artifact;
}

}  // namespace tunefleet
