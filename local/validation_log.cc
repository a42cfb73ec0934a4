#include "local/validation_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

std::optional<int64_t> ConfigIndex(const Record& r) {
  auto it = r.config.find("index");
  if (it == r.config.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

bool SameConfig(const Record& a, const Record& b) {
  return a.task_name == b.task_name && a.workload_name == b.workload_name && a.target == b.target &&
         a.workload_args == b.workload_args && ConfigIndex(a).has_value() &&
         ConfigIndex(a) == ConfigIndex(b);
}

// One line of the file: its text without the newline, whether it had one,
// and the record it holds when it is a TuneFleet record line.
struct Line {
  std::string_view text;
  bool newline = false;
  std::optional<Record> record;
};

}  // namespace

[[nodiscard]] absl::StatusOr<int> WriteValidationsToLog(const std::string& path,
                                                        const std::vector<Record>& validated) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return IoError("cannot stat", path);
  }
  absl::StatusOr<std::string> read = ReadFileToString(path, kMaxRecordLogBytes);
  if (!read.ok()) return read.status();
  const std::string content = *std::move(read);

  std::vector<Line> lines;
  for (size_t pos = 0; pos < content.size();) {
    const size_t end = content.find('\n', pos);
    Line line;
    line.newline = end != std::string::npos;
    line.text = std::string_view(content).substr(pos, (line.newline ? end : content.size()) - pos);
    absl::StatusOr<Record> record = Record::FromLine(line.text);
    if (record.ok()) line.record = *std::move(record);
    pos = line.newline ? end + 1 : content.size();
    lines.push_back(std::move(line));
  }

  std::vector<std::optional<std::string>> replaced(lines.size());
  int changed = 0;
  for (const Record& v : validated) {
    std::optional<size_t> match;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::optional<Record>& r = lines[i].record;
      if (!r || !r->result.ok() || !SameConfig(*r, v)) continue;
      if (!match || r->result.MeanCost() < lines[*match].record->result.MeanCost()) match = i;
    }
    if (!match) continue;
    Record updated = *lines[*match].record;
    updated.validation = v.validation;
    if (!replaced[*match]) ++changed;
    replaced[*match] = updated.ToLine();
  }
  if (changed == 0) return 0;

  std::string out;
  out.reserve(content.size() + 256 * changed);
  for (size_t i = 0; i < lines.size(); ++i) {
    out += replaced[i] ? std::string_view(*replaced[i]) : lines[i].text;
    if (lines[i].newline) out += '\n';
  }
  TF_RETURN_IF_ERROR(ReplaceFileAtomically(path, out, st.st_mode & 07777));
  return changed;
}

}  // namespace tunefleet
