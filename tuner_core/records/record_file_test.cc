#include "tuner_core/records/record_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh path in the test's temporary directory, unique per test.
std::string TempPath(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  // TempDir() ends in a slash.
  std::string path = ::testing::TempDir() + info->name() + "_" + name;
  std::remove(path.c_str());
  return path;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Record MakeRecord(int64_t index, double cost) {
  Record record;
  record.target = "llvm";
  record.task_name = "dense_pack.x86";
  record.workload_name = "dense";
  record.workload_args = {{"M", 64}, {"N", 64}, {"K", 64}, {"layout", "NK"}};
  record.config = {{"index", index}, {"code_hash", nullptr}, {"entity", nlohmann::json::array()}};
  record.result.costs = {cost};
  record.result.timestamp = 1700000000.0 + index;
  return record;
}

std::vector<int64_t> Indices(const std::vector<Record>& records) {
  std::vector<int64_t> out;
  for (const Record& r : records) out.push_back(r.config["index"].get<int64_t>());
  return out;
}

TEST(RecordFileTest, WrittenRecordsReadBackInOrder) {
  const std::string path = TempPath("records.jsonl");
  {
    absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int64_t i = 0; i < 3; ++i)
      ASSERT_TRUE((*writer)->Append(MakeRecord(i, 0.1 * (i + 1))).ok());
  }
  {
    // Reopening appends rather than truncating.
    absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path, true);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(MakeRecord(3, 0.4)).ok());
  }
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_THAT(Indices(report->records), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(report->records[2].result.costs, std::vector<double>{0.30000000000000004});
}

TEST(RecordFileTest, CorruptMiddleLineIsSkippedWithAWarningNamingIt) {
  const std::string path = TempPath("records.jsonl");
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n" + "{\"input\": garbage\n" +
                      MakeRecord(2, 0.3).ToLine() + "\n");
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0, 2));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_THAT(report->warnings[0], HasSubstr(path + ":2: corrupt line skipped: "));
}

TEST(RecordFileTest, WellFormedJsonThatIsNotARecordIsCorrupt) {
  const std::string path = TempPath("records.jsonl");
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n{\"input\": []}\n");
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_THAT(report->warnings[0], HasSubstr(":2: corrupt line skipped: record field \"input\""));
}

TEST(RecordFileTest, AutoTvmLinesAreReadPerLineBesideOurs) {
  const std::string path = TempPath("mixed.log");
  const std::string tvm_line =
      R"({"input": ["llvm -keys=cpu", "conv2d_nhwc.x86", [["TENSOR", [1, 8, 8, 4], "float32"]],)"
      R"( {}], "config": {"index": 0, "code_hash": null, "entity": []},)"
      R"( "result": [[0.001], 0, 1.0, 1700000000.0], "version": 0.2, "tvm_version": "0.18.0"})";
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n" + tvm_line + "\n\n" +
                      MakeRecord(2, 0.3).ToLine() + "\n");
  absl::StatusOr<std::vector<RecordLine>> lines = ReadRecordLines(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 3u);  // the blank line is skipped
  EXPECT_TRUE((*lines)[0].record.ok());
  EXPECT_FALSE((*lines)[0].autotvm);
  EXPECT_EQ((*lines)[1].line_number, 2);
  EXPECT_TRUE((*lines)[1].autotvm);
  EXPECT_THAT(std::string((*lines)[1].record.status().message()),
              HasSubstr("\"conv2d_nhwc.x86\" has no TuneFleet workload"));
  EXPECT_EQ((*lines)[2].line_number, 4);

  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0, 2));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_THAT(report->warnings[0], HasSubstr(path + ":2: AutoTVM line skipped: "));
}

TEST(RecordFileTest, TornLastLineIsIgnoredWithAWarning) {
  const std::string path = TempPath("records.jsonl");
  const std::string second = MakeRecord(1, 0.2).ToLine();
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n" + second.substr(0, second.size() / 2));
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0));
  EXPECT_THAT(report->warnings, ElementsAre(path + ":2: torn last line ignored"));
}

TEST(RecordFileTest, CompleteLastLineWithoutNewlineIsRead) {
  const std::string path = TempPath("records.jsonl");
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n" + MakeRecord(1, 0.2).ToLine());
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0, 1));
  EXPECT_TRUE(report->warnings.empty());
}

TEST(RecordFileTest, WriterAfterATornLineStartsANewLine) {
  const std::string path = TempPath("records.jsonl");
  const std::string torn = MakeRecord(1, 0.2).ToLine().substr(0, 40);
  WriteFile(path, MakeRecord(0, 0.1).ToLine() + "\n" + torn);
  {
    absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(MakeRecord(2, 0.3)).ok());
  }
  EXPECT_EQ(ReadFile(path),
            MakeRecord(0, 0.1).ToLine() + "\n" + torn + "\n" + MakeRecord(2, 0.3).ToLine() + "\n");
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  // The torn fragment is now a terminated corrupt line; the new record is intact.
  EXPECT_THAT(Indices(report->records), ElementsAre(0, 2));
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_THAT(report->warnings[0], HasSubstr(":2: corrupt line skipped"));
}

TEST(RecordFileTest, EmptyFileHasNoRecordsAndNoWarnings) {
  const std::string path = TempPath("records.jsonl");
  WriteFile(path, "");
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->records.empty());
  EXPECT_TRUE(report->warnings.empty());
}

TEST(RecordFileTest, BlankLinesAreSkippedSilently) {
  const std::string path = TempPath("records.jsonl");
  WriteFile(path, "\n" + MakeRecord(0, 0.1).ToLine() + "\n\r\n  \n");
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(Indices(report->records), ElementsAre(0));
  EXPECT_TRUE(report->warnings.empty());
}

TEST(RecordFileTest, MissingFileIsNotFound) {
  absl::StatusOr<ReadReport> report = ReadRecords(TempPath("does_not_exist.jsonl"));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kNotFound);
}

TEST(RecordFileTest, OpenInAMissingDirectoryFails) {
  absl::StatusOr<std::unique_ptr<RecordWriter>> writer =
      RecordWriter::Open(TempPath("no_such_dir") + "/records.jsonl");
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kNotFound);
}

TEST(RecordFileTest, ConcurrentAppendsNeverInterleave) {
  const std::string path = TempPath("records.jsonl");
  absl::StatusOr<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        EXPECT_TRUE((*writer)->Append(MakeRecord(t * kPerThread + i, 0.1)).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  absl::StatusOr<ReadReport> report = ReadRecords(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_EQ(report->records.size(), static_cast<size_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace tunefleet
