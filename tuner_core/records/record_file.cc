#include "tuner_core/records/record_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "nlohmann/json.hpp"
#include "tuner_core/records/tvm_record.h"

namespace tunefleet {
namespace {

// Writes all of `data`, retrying on EINTR and short writes. With O_APPEND a
// short write is practically impossible for a regular file, but it would
// otherwise silently truncate a record.
[[nodiscard]] absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("write ", path));
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

// True when the file is non-empty and its last byte is not a newline, i.e.
// an earlier writer died in the middle of a line.
bool EndsInTornLine(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return false;
  char last = '\n';
  return ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

bool IsBlank(absl::string_view line) {
  return line.find_first_not_of(" \t\r") == absl::string_view::npos;
}

}  // namespace

RecordWriter::RecordWriter(std::string path, int fd, bool sync_each_append)
    : path_(std::move(path)), sync_each_append_(sync_each_append), fd_(fd) {}

RecordWriter::~RecordWriter() {
  absl::MutexLock lock(&mutex_);
  ::close(fd_);
}

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path,
                                                                 bool sync_each_append) {
  // O_RDWR only so the torn-line check below can read the last byte; every
  // write goes to the end because of O_APPEND.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path, " for append"));
  if (EndsInTornLine(fd)) {
    // Terminate the torn line so it stays one corrupt line that readers skip,
    // instead of swallowing the first record we append.
    TF_LOG(WARNING) << "record file " << path << " ends in a torn line; starting a new line";
    absl::Status status = WriteAll(fd, "\n", path);
    if (!status.ok()) {
      ::close(fd);
      return status;
    }
  }
  return std::unique_ptr<RecordWriter>(new RecordWriter(path, fd, sync_each_append));
}

absl::Status RecordWriter::Append(const Record& record) {
  // One buffer, one write(): a concurrent reader or writer never sees half a
  // record followed by someone else's line.
  std::string line = record.ToLine();
  line.push_back('\n');
  absl::MutexLock lock(&mutex_);
  absl::Status status = WriteAll(fd_, line, path_);
  if (!status.ok()) return status;
  if (sync_each_append_ && ::fsync(fd_) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("fsync ", path_));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<std::vector<RecordLine>> ReadRecordLines(const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFileToString(path, kMaxRecordLogBytes);
  if (!contents.ok()) return contents.status();

  std::vector<RecordLine> lines;
  TvmRecordConverter converter;  // defines each AutoTVM task's space once per file
  absl::string_view rest = *contents;
  int64_t line_number = 0;
  while (!rest.empty()) {
    ++line_number;
    const size_t newline = rest.find('\n');
    const bool terminated = newline != absl::string_view::npos;
    absl::string_view text = rest.substr(0, terminated ? newline : rest.size());
    rest.remove_prefix(terminated ? newline + 1 : rest.size());
    if (IsBlank(text)) continue;

    RecordLine line;
    line.line_number = line_number;
    const nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                                        /*allow_exceptions=*/false);
    line.autotvm = IsTvmRecordJson(parsed);
    line.record = line.autotvm ? converter.ConvertJson(parsed)
                               : Record::FromLine(std::string_view(text.data(), text.size()));
    // Only the last line can lack its newline: a write that was cut short.
    line.torn = !line.record.ok() && !terminated;
    lines.push_back(std::move(line));
  }
  return lines;
}

[[nodiscard]] absl::StatusOr<ReadReport> ReadRecords(const std::string& path) {
  absl::StatusOr<std::vector<RecordLine>> lines = ReadRecordLines(path);
  if (!lines.ok()) return lines.status();

  ReadReport report;
  for (RecordLine& line : *lines) {
    if (line.record.ok()) {
      report.records.push_back(*std::move(line.record));
      continue;
    }
    std::string warning = absl::StrCat(path, ":", line.line_number, ": ");
    if (line.torn) {
      absl::StrAppend(&warning, "torn last line ignored");
    } else {
      absl::StrAppend(&warning, line.autotvm ? "AutoTVM line skipped: " : "corrupt line skipped: ",
                      line.record.status().message());
    }
    TF_LOG(WARNING) << warning;
    report.warnings.push_back(std::move(warning));
  }
  return report;
}

}  // namespace tunefleet
