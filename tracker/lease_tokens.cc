#include "tracker/lease_tokens.h"

#include <sodium.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet {
namespace {

constexpr size_t kMacHexDigits = 32;  // the first 16 bytes of the HMAC

char StageLetter(Stage stage) { return stage == Stage::kBuild ? 'b' : 'm'; }

static_assert(kLeaseKeyHexDigits / 2 == crypto_auth_hmacsha256_KEYBYTES,
              "a store's lease key is one HMAC-SHA256 key");

}  // namespace

absl::StatusOr<LeaseTokens> LeaseTokens::FromHexKey(absl::string_view hex_key) {
  if (hex_key.size() != kLeaseKeyHexDigits ||
      hex_key.find_first_not_of("0123456789abcdefABCDEF") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the store's lease key is not ", kLeaseKeyHexDigits, " hex digits"));
  }
  const std::string bytes = absl::HexStringToBytes(hex_key);
  if (sodium_init() < 0) return absl::InternalError("libsodium failed to initialise");
  LeaseTokens tokens;
  for (size_t i = 0; i < bytes.size(); ++i) tokens.key_[i] = static_cast<unsigned char>(bytes[i]);
  unsigned char instance[4];
  randombytes_buf(instance, sizeof(instance));
  tokens.instance_ = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(instance), sizeof(instance)));
  return tokens;
}

std::string LeaseTokens::Mac(absl::string_view serial, char stage, int64_t trial_id,
                             absl::string_view job_id, absl::string_view worker_name) const {
  // Fields joined by NUL, which none of them holds where it matters: the
  // serial, stage and trial are printable; a job id or name with a NUL only
  // signs differently.
  const std::string message =
      absl::StrCat(serial, std::string(1, '\0'), std::string(1, stage), std::string(1, '\0'),
                   trial_id, std::string(1, '\0'), job_id, std::string(1, '\0'), worker_name);
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(message.data()),
                         message.size(), key_.data());
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(mac), sizeof(mac)))
      .substr(0, kMacHexDigits);
}

std::string LeaseTokens::Mint(const LeaseClaim& claim, absl::string_view worker_name) {
  const std::string serial = absl::StrCat("L", instance_, "-", next_serial_++);
  const char stage = StageLetter(claim.stage);
  return absl::StrCat(serial, ".", std::string(1, stage), ".", claim.trial_id, ".",
                      Mac(serial, stage, claim.trial_id, claim.job_id, worker_name), ".",
                      claim.job_id);
}

absl::StatusOr<LeaseClaim> LeaseTokens::Verify(absl::string_view lease_id,
                                               absl::string_view worker_name) const {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease id \"", absl::CHexEscape(lease_id.substr(0, 80)), "\": ", why));
  };
  if (lease_id.size() > kMaxLeaseIdBytes) return refuse("too long");
  std::vector<absl::string_view> parts = absl::StrSplit(lease_id, absl::MaxSplits('.', 4));
  LeaseClaim claim;
  if (parts.size() != 5 || parts[0].size() < 2 || parts[0][0] != 'L' || parts[1].size() != 1 ||
      (parts[1][0] != 'b' && parts[1][0] != 'm') || !absl::SimpleAtoi(parts[2], &claim.trial_id) ||
      claim.trial_id < 0 || parts[3].size() != kMacHexDigits || parts[4].empty()) {
    return refuse("not a lease id of this tracker's form");
  }
  claim.stage = parts[1][0] == 'b' ? Stage::kBuild : Stage::kMeasure;
  claim.job_id = std::string(parts[4]);
  const std::string expected =
      Mac(parts[0], parts[1][0], claim.trial_id, claim.job_id, worker_name);
  if (sodium_memcmp(expected.data(), parts[3].data(), kMacHexDigits) != 0) {
    return refuse(
        "its signature does not match (another store's lease, another worker's, or "
        "altered)");
  }
  return claim;
}

}  // namespace tunefleet
