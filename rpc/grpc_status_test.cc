#include "rpc/grpc_status.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(GrpcStatusTest, OkStaysOk) {
  EXPECT_TRUE(ToGrpc(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpc(grpc::Status::OK).ok());
}

TEST(GrpcStatusTest, KeepsCodeAndMessageBothWays) {
  const absl::Status original = absl::NotFoundError("no job \"job-7\"");
  const grpc::Status wire = ToGrpc(original);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(wire.error_message(), "no job \"job-7\"");
  EXPECT_EQ(FromGrpc(wire), original);
}

TEST(GrpcStatusTest, EveryCanonicalCodeMapsToTheSameNumber) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), "x");
    EXPECT_EQ(static_cast<int>(ToGrpc(status).error_code()), code);
    EXPECT_EQ(FromGrpc(ToGrpc(status)), status);
  }
}

}  // namespace
}  // namespace tunefleet
