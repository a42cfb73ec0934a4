#include "rpc/plaintext_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(PlaintextPolicyTest, OnlyLoopbackLiteralsCountAsLoopback) {
  for (const char* address : {"127.0.0.1:80", "127.1.2.3:0", "[::1]:443", "localhost:9"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address :
       {"127.attacker.example:80", "127.0.0.1.nip.io:80", "1270.0.0.1:1", "127.0.0.256:1",
        "[::2]:1", "0.0.0.0:0", "localhost.example:1", "10.0.0.5:7070"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

TEST(PlaintextPolicyTest, PlaintextOffLoopbackNeedsInsecure) {
  EXPECT_TRUE(CheckPlaintextAllowed("127.0.0.1:7070", false, "--tls_ca").ok());
  const absl::Status refused = CheckPlaintextAllowed("tracker.example:7070", false, "--tls_ca");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("tracker.example:7070"));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("--tls_ca"));
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("--insecure"));
  EXPECT_TRUE(CheckPlaintextAllowed("tracker.example:7070", true, "--tls_ca").ok());
}

TEST(PlaintextPolicyTest, EveryReplicaOfAListIsChecked) {
  EXPECT_TRUE(CheckPlaintextAllowed("127.0.0.1:7070, 127.0.0.1:7071", false, "--tls_ca").ok());
  const absl::Status refused =
      CheckPlaintextAllowed("127.0.0.1:7070,tracker-1.example:7070", false, "--tls_ca");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("refusing plaintext to tracker-1.example"));
}

}  // namespace
}  // namespace tunefleet
