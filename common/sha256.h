// SHA-256 of a byte string, as lowercase hex: the content hash of artifacts
// (BuildResult.artifact_hash) and the builder's cache keys. Self-contained
// (FIPS 180-4), so that light components such as the device agent need
// neither LLVM nor OpenSSL to check an artifact.
//
//   std::string hash = Sha256Hex(shared_object);   // 64 hex digits
#ifndef TUNEFLEET_COMMON_SHA256_H_
#define TUNEFLEET_COMMON_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet {

// Incremental hashing, for keys made of several fields.
class Sha256 {
 public:
  Sha256();
  void Update(absl::string_view bytes);
  // The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> Finish();
  std::string FinishHex();

 private:
  void Compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(absl::string_view bytes);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SHA256_H_
