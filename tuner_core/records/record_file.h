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

#include <cstdint>
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
  //   "tvm.log:3: AutoTVM line skipped: AutoTVM task \"conv2d_nhwc.x86\" has no ..."
  std::vector<std::string> warnings;
};

// One non-blank line of a record file: the record it holds, or why it holds
// none.
struct RecordLine {
  int64_t line_number = 0;  // 1-based
  absl::StatusOr<Record> record;
  bool autotvm = false;  // the line is in AutoTVM's format (tvm_record.h)
  bool torn = false;     // an unterminated last line that does not parse
};

// Every non-blank line of a file, in order, as a record or the reason it is
// none. A line may be a TuneFleet record or a line of an AutoTVM log (TVM
// v0.18 and earlier; converted as tvm_record.h describes, e.g. "config of
// AutoTVM task dense_nopack.x86 does not fit the space of template
// dense_pack.x86: config names knob 'tile_y', which this space does not
// define"); one file may mix both. NotFound if the file does not exist.
[[nodiscard]] absl::StatusOr<std::vector<RecordLine>> ReadRecordLines(const std::string& path);

// Reads every record of a file (TuneFleet's or AutoTVM's lines, as
// ReadRecordLines). NotFound if the file does not exist. A
// corrupt line is skipped, and an unterminated, unparseable last line (a
// write cut short) is ignored, each with a warning naming its line number
// (also logged with TF_LOG(WARNING)); a bad line never rejects the whole
// file. Blank lines are skipped silently.
[[nodiscard]] absl::StatusOr<ReadReport> ReadRecords(const std::string& path);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_RECORD_FILE_H_
