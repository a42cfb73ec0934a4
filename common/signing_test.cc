#include "common/signing.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/" + name;
}

struct SignedArtifact {
  std::string bytes =
      "\x7f"
      "ELF pretend kernel code";
  std::string hash = Sha256Hex(bytes);
  std::string entry = "default_function";
  std::string signature;
  std::string signer;
};

class SigningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<SigningKey> key = SigningKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status();
    key_.emplace(*key);
    artifact_.signature = key_->Sign(artifact_.hash, artifact_.entry);
    artifact_.signer = key_->public_key_text();
    absl::StatusOr<PinnedKeys> pinned = PinnedKeys::FromTexts({artifact_.signer});
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    pinned_ = *pinned;
  }

  [[nodiscard]] absl::Status Verify(const SignedArtifact& a) const {
    return pinned_.Verify(a.bytes, a.hash, a.entry, a.signature, a.signer);
  }

  std::optional<SigningKey> key_;
  SignedArtifact artifact_;
  PinnedKeys pinned_;
};

TEST_F(SigningTest, AcceptsAnArtifactSignedByAPinnedKey) {
  EXPECT_TRUE(Verify(artifact_).ok()) << Verify(artifact_);
}

TEST_F(SigningTest, RefusesAnUnsignedArtifact) {
  SignedArtifact unsigned_artifact = artifact_;
  unsigned_artifact.signature.clear();
  unsigned_artifact.signer.clear();
  const absl::Status status = Verify(unsigned_artifact);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("unsigned"));
}

TEST_F(SigningTest, RefusesTamperedBytes) {
  SignedArtifact tampered = artifact_;
  tampered.bytes[3] ^= 1;
  const absl::Status status = Verify(tampered);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("tampered"));
}

TEST_F(SigningTest, RefusesTamperedBytesWhoseHashWasRecomputed) {
  SignedArtifact tampered = artifact_;
  tampered.bytes[3] ^= 1;
  tampered.hash = Sha256Hex(tampered.bytes);
  const absl::Status status = Verify(tampered);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("does not verify"));
}

TEST_F(SigningTest, RefusesASignatureReplayedOntoAnotherEntryPoint) {
  SignedArtifact replayed = artifact_;
  replayed.entry = "other_function";
  EXPECT_TRUE(absl::IsPermissionDenied(Verify(replayed)));
}

TEST_F(SigningTest, RefusesAnArtifactSignedByAnUnpinnedKey) {
  absl::StatusOr<SigningKey> rogue = SigningKey::Generate();
  ASSERT_TRUE(rogue.ok());
  SignedArtifact forged = artifact_;
  forged.signature = rogue->Sign(forged.hash, forged.entry);
  forged.signer = rogue->public_key_text();
  const absl::Status status = Verify(forged);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("not a pinned builder key"));

  // Claiming the pinned key's name does not help either.
  forged.signer = artifact_.signer;
  EXPECT_TRUE(absl::IsPermissionDenied(Verify(forged)));
}

TEST_F(SigningTest, KeyFilesRoundTrip) {
  const std::string secret = TempPath("builder.key");
  ASSERT_TRUE(key_->WriteFile(secret).ok());
  absl::StatusOr<SigningKey> loaded = LoadSigningKey(secret);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->public_key_text(), key_->public_key_text());
  EXPECT_EQ(loaded->Sign(artifact_.hash, artifact_.entry), artifact_.signature);

  const std::string pinned_path = TempPath("builder_keys");
  ASSERT_TRUE(WritePinnedKeysFile(pinned_path, {{"builder-1", key_->public_key_text()}}).ok());
  absl::StatusOr<PinnedKeys> pinned = LoadPinnedKeys(pinned_path);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_TRUE(pinned->Contains(key_->public_key_text()));
}

TEST_F(SigningTest, RefusesASigningKeyFileOthersCanRead) {
  const std::string secret = TempPath("open.key");
  ASSERT_TRUE(key_->WriteFile(secret).ok());
  ASSERT_EQ(chmod(secret.c_str(), 0644), 0);
  const absl::StatusOr<SigningKey> loaded = LoadSigningKey(secret);
  EXPECT_TRUE(absl::IsFailedPrecondition(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("chmod 600"));
}

TEST(PinnedKeysTest, NamesTheBadLineOfAKeysFile) {
  const std::string path = TempPath("bad_keys");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("# comment\nbuilder-1 ed25519:notbase64!!\n", f);
  fclose(f);
  const absl::StatusOr<PinnedKeys> pinned = LoadPinnedKeys(path);
  EXPECT_TRUE(absl::IsInvalidArgument(pinned.status())) << pinned.status();
  EXPECT_THAT(pinned.status().message(), HasSubstr("line 2"));
}

}  // namespace
}  // namespace tunefleet
