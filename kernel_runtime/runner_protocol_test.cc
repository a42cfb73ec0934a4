#include "kernel_runtime/runner_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// A pipe whose ends close with the test.
class PipeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe2(fds_, O_CLOEXEC | O_NONBLOCK), 0); }
  void TearDown() override {
    CloseReader();
    CloseWriter();
  }
  void CloseReader() {
    if (fds_[0] >= 0) close(fds_[0]);
    fds_[0] = -1;
  }
  void CloseWriter() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }
  int reader() const { return fds_[0]; }
  int writer() const { return fds_[1]; }
  static int64_t SoonNanos() { return SystemClock().NowNanos() + 50'000'000; }  // 50 ms

  int fds_[2] = {-1, -1};
};

TEST_F(PipeTest, FramesRoundTrip) {
  ASSERT_TRUE(WriteFrame(writer(), "hello", kNoDeadline).ok());
  ASSERT_TRUE(WriteFrame(writer(), "", kNoDeadline).ok());
  std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(WriteFrame(writer(), binary, kNoDeadline).ok());
  EXPECT_EQ(*ReadFrame(reader(), kNoDeadline), "hello");
  EXPECT_EQ(*ReadFrame(reader(), kNoDeadline), "");
  EXPECT_EQ(*ReadFrame(reader(), kNoDeadline), binary);
}

TEST_F(PipeTest, ReadingFromAnEmptyPipeHitsTheDeadline) {
  auto frame = ReadFrame(reader(), SoonNanos());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(WaitUntilReadable(reader(), SoonNanos()).code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(PipeTest, WriterGoneIsUnavailable) {
  ASSERT_TRUE(WriteAllBytes(writer(),
                            std::string("\x08\x00\x00\x00"
                                        "abc",
                                        7),
                            kNoDeadline)
                  .ok());
  CloseWriter();
  EXPECT_TRUE(WaitUntilReadable(reader(), SoonNanos()).ok());
  auto frame = ReadFrame(reader(), SoonNanos());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(frame.status().message(), HasSubstr("closed after 3 of 8 bytes"));
}

TEST_F(PipeTest, ReaderGoneIsUnavailableAndRaisesNoSignal) {
  CloseReader();
  // Without the suppression SIGPIPE would end this test process.
  absl::Status written = WriteFrame(writer(), "anyone there?", SoonNanos());
  EXPECT_EQ(written.code(), absl::StatusCode::kUnavailable);
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "a SIGPIPE was left pending";
}

TEST_F(PipeTest, AFullPipeHitsTheWriteDeadline) {
  const std::string chunk(1 << 16, 'x');
  absl::Status written;
  for (int i = 0; i < 64 && written.ok(); ++i)
    written = WriteAllBytes(writer(), chunk, SoonNanos());
  EXPECT_EQ(written.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(PipeTest, OversizedLengthIsDataLoss) {
  ASSERT_TRUE(WriteAllBytes(writer(), "\xff\xff\xff\xff", kNoDeadline).ok());
  EXPECT_EQ(ReadFrame(reader(), SoonNanos()).status().code(), absl::StatusCode::kDataLoss);
}

// A child announcing a result bigger than any RunResult is refused at the
// header: nothing is allocated or read for it.
TEST_F(PipeTest, AResultFrameAboveTheResultLimitIsDataLoss) {
  const uint32_t size = kMaxResultFrameBytes + 1;
  const char header[4] = {static_cast<char>(size), static_cast<char>(size >> 8),
                          static_cast<char>(size >> 16), static_cast<char>(size >> 24)};
  ASSERT_TRUE(WriteAllBytes(writer(), std::string(header, 4), kNoDeadline).ok());
  absl::StatusOr<std::string> frame = ReadFrame(reader(), SoonNanos(), kMaxResultFrameBytes);
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(frame.status().message()), HasSubstr("exceeds the limit of 1048576"));
}

TEST(SandboxedChildEnvironmentTest, KeepsOnlyWhatTheChildNeeds) {
  setenv("TUNEFLEET_TOKEN", "tf_1.secret", 1);
  setenv("LD_LIBRARY_PATH", "/opt/bundle/lib", 1);
  const std::vector<std::string> kept = SandboxedChildEnvironment();
  unsetenv("TUNEFLEET_TOKEN");
  unsetenv("LD_LIBRARY_PATH");
  EXPECT_THAT(kept, ::testing::Contains("LD_LIBRARY_PATH=/opt/bundle/lib"));
  for (const std::string& entry : kept) EXPECT_EQ(entry.find("TUNEFLEET_TOKEN"), std::string::npos);
}

// The child shares the page read-write; truncating it would make the
// agent's next read fault (SIGBUS). Its size is sealed.
TEST(RunnerStatusPageTest, ThePageCannotBeTruncatedOrGrown) {
  const int fd = CreateRunnerStatusFd();
  ASSERT_GE(fd, 0);
  EXPECT_NE(ftruncate(fd, 0), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(ftruncate(fd, 1 << 20), 0);
  EXPECT_EQ(errno, EPERM);
  RunnerStatusPage* page = MapRunnerStatusPage(fd);
  ASSERT_NE(page, nullptr);
  page->stage.store(3);  // still writable
  EXPECT_EQ(page->stage.load(), 3u);
  UnmapRunnerStatusPage(page);
  close(fd);
}

TEST(RunnerStatusPageTest, SharedBetweenTwoMappings) {
  const int fd = CreateRunnerStatusFd();
  ASSERT_GE(fd, 0);
  RunnerStatusPage* first = MapRunnerStatusPage(fd);
  RunnerStatusPage* second = MapRunnerStatusPage(fd);
  close(fd);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->stage.load(), static_cast<uint32_t>(RunnerStage::kIdle));
  first->stage.store(static_cast<uint32_t>(RunnerStage::kTimingRuns));
  first->requests_received.fetch_add(1);
  EXPECT_EQ(static_cast<RunnerStage>(second->stage.load()), RunnerStage::kTimingRuns);
  EXPECT_EQ(second->requests_received.load(), 1u);
  EXPECT_STREQ(RunnerStageDescription(RunnerStage::kTimingRuns),
               "running the kernel (timing runs)");
  UnmapRunnerStatusPage(first);
  UnmapRunnerStatusPage(second);
}

}  // namespace
}  // namespace tunefleet
