#include "common/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(Sha256Test, MatchesFipsVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>(i * 7));
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 500}) {
    Sha256 sha;
    sha.Update(absl::string_view(text).substr(0, split));
    sha.Update(absl::string_view(text).substr(split));
    EXPECT_EQ(sha.FinishHex(), Sha256Hex(text)) << split;
  }
}

}  // namespace
}  // namespace tunefleet
