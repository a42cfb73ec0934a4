// Files of tuning records (JSON lines, see record.h): an append-only writer
// that survives crashes, and a reader that salvages what it can.
//
//   TF_ASSIGN_OR_RETURN(auto writer, RecordWriter::Open("dense.jsonl"));
//   TF_RETURN_IF_ERROR(writer->Append(record));
//   ...
//   TF_ASSIGN_OR_RETURN(ReadReport report, ReadRecords("dense.jsonl"));
//
// A process killed mid-write leaves at most one torn line at the end of the
// file. The reader ignores it with a warning; a later writer first ends it
// with a newline so the next record starts on a line of its own.
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_RECORD_FILE_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_RECORD_FILE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tuner_core/records/record.h"

namespace tunefleet {

// Appends records to a file, one line per record. Thread-safe: each line is
// one write() on an O_APPEND descriptor, so lines from several threads (or
// processes) never interleave.
class RecordWriter {
 public:
  // Opens `path` for appending, creating it if needed. With
  // `sync_each_append`, every Append also fsyncs (durable across power loss,
  // at the price of a disk flush per record).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RecordWriter>> Open(
      const std::string& path, bool sync_each_append = false);
  ~RecordWriter();

  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Writes record.ToLine() and a newline. No user-space buffering: when this
  // returns OK the line is in the kernel (and on disk with sync_each_append).
  [[nodiscard]] absl::Status Append(const Record& record);

  const std::string& path() const { return path_; }

 private:
  RecordWriter(std::string path, int fd, bool sync_each_append);

  const std::string path_;
  const bool sync_each_append_;
  absl::Mutex mutex_;
  int fd_ ABSL_GUARDED_BY(mutex_);
};

struct ReadReport {
  std::vector<Record> records;  // in file order
  // One per line that was not read, e.g.
  //   "records.jsonl:17: corrupt line skipped: record field \"result\": missing"
  //   "records.jsonl:42: torn last line ignored"
  std::vector<std::string> warnings;
};

// Reads every record of a file. NotFound if the file does not exist. A
// corrupt line is skipped, and an unterminated, unparseable last line (a
// write cut short) is ignored, each with a warning naming its line number
// (also logged with TF_LOG(WARNING)); a bad line never rejects the whole
// file. Blank lines are skipped silently.
[[nodiscard]] absl::StatusOr<ReadReport> ReadRecords(const std::string& path);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_RECORD_FILE_H_
