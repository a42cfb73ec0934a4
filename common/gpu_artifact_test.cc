#include "common/gpu_artifact.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kPtx[] = ".version 8.0\n.target sm_80\n.visible .entry k(.param .u64 a) { ret; }\n";

TEST(GpuArtifactTest, RoundTrips) {
  GpuLaunch launch;
  launch.entry = "tf_dense_gpu";
  launch.grid = {32, 16, 1};
  launch.block = {16, 8, 2};
  launch.shared_bytes = 8192;
  const std::string bytes = FormatGpuArtifact(launch, kPtx);
  EXPECT_TRUE(IsGpuArtifact(bytes));
  absl::StatusOr<GpuArtifact> parsed = ParseGpuArtifact(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->launch.entry, "tf_dense_gpu");
  EXPECT_EQ(parsed->launch.grid, (std::array<int64_t, 3>{32, 16, 1}));
  EXPECT_EQ(parsed->launch.block, (std::array<int64_t, 3>{16, 8, 2}));
  EXPECT_EQ(parsed->launch.threads_per_block(), 256);
  EXPECT_EQ(parsed->launch.shared_bytes, 8192);
  EXPECT_EQ(parsed->ptx, kPtx);
}

TEST(GpuArtifactTest, SharedObjectIsNotAGpuArtifact) {
  EXPECT_FALSE(
      IsGpuArtifact("\x7f"
                    "ELF\x02\x01"));
  EXPECT_THAT(ParseGpuArtifact("\x7f"
                               "ELF")
                  .status()
                  .message(),
              HasSubstr("not a GPU artifact"));
}

TEST(GpuArtifactTest, RejectsMalformedHeaders) {
  const std::string prefix = "// tunefleet-gpu-kernel ";
  auto error = [&](const std::string& header) {
    return std::string(ParseGpuArtifact(prefix + header + "\n" + kPtx).status().message());
  };
  EXPECT_THAT(error("entry=k grid=1,1 block=1,1,1 shared_bytes=0"), HasSubstr("grid=1,1"));
  EXPECT_THAT(error("entry=k grid=1,1,1 block=0,1,1 shared_bytes=0"), HasSubstr("block=0,1,1"));
  EXPECT_THAT(error("entry=k grid=1,1,1 block=1,1,1 shared_bytes=-4"), HasSubstr("shared_bytes"));
  EXPECT_THAT(error("entry=k grid=1,1,1 block=1,1,1"), HasSubstr("must give"));
  EXPECT_THAT(error("entry=k grid=1,1,1 block=1,1,1 shared_bytes=0 colour=red"),
              HasSubstr("unknown field \"colour\""));
  EXPECT_THAT(error("entry grid=1,1,1 block=1,1,1 shared_bytes=0"), HasSubstr("not key=value"));
  EXPECT_THAT(
      ParseGpuArtifact(prefix + "entry=k grid=1,1,1 block=1,1,1 shared_bytes=0").status().message(),
      HasSubstr("without a PTX module"));
  EXPECT_THAT(
      ParseGpuArtifact(prefix + "entry=k grid=1,1,1 block=1,1,1 shared_bytes=0\n.version 8.0\n")
          .status()
          .message(),
      HasSubstr("no .entry"));
}

}  // namespace
}  // namespace tunefleet
