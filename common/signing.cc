#include "common/signing.h"

#include <sodium.h>

#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

constexpr absl::string_view kPublicKeyPrefix = "ed25519:";
constexpr absl::string_view kSecretKeyTag = "ed25519-secret";
constexpr absl::string_view kSigningDomain = "tunefleet-artifact-v1";
constexpr int64_t kMaxKeyFileBytes = int64_t{1} << 20;

}  // namespace

[[nodiscard]] absl::Status InitSodium() {
  // sodium_init is thread-safe and idempotent: 0 first time, 1 afterwards.
  if (sodium_init() < 0) return absl::InternalError("libsodium failed to initialise");
  return absl::OkStatus();
}

std::string PublicKeyText(const std::array<unsigned char, kEd25519PublicKeyBytes>& key) {
  return absl::StrCat(
      kPublicKeyPrefix,
      absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(key.data()), key.size())));
}

[[nodiscard]] absl::StatusOr<std::array<unsigned char, kEd25519PublicKeyBytes>> ParsePublicKeyText(
    absl::string_view text) {
  absl::string_view encoded = text;
  if (!absl::ConsumePrefix(&encoded, kPublicKeyPrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("public key '", text, "' does not start with '", kPublicKeyPrefix, "'"));
  }
  std::string raw;
  if (!absl::Base64Unescape(encoded, &raw) || raw.size() != kEd25519PublicKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("public key '", text, "' is not the base64 of ",
                                                   kEd25519PublicKeyBytes, " bytes"));
  }
  std::array<unsigned char, kEd25519PublicKeyBytes> key;
  std::memcpy(key.data(), raw.data(), key.size());
  return key;
}

std::string ArtifactSigningMessage(absl::string_view artifact_hash_hex,
                                   absl::string_view entry_name) {
  // NUL separators: none of the parts may hold one (hex and C symbols).
  return absl::StrCat(kSigningDomain, std::string(1, '\0'), artifact_hash_hex, std::string(1, '\0'),
                      entry_name);
}

[[nodiscard]] absl::StatusOr<SigningKey> SigningKey::Generate() {
  TF_RETURN_IF_ERROR(InitSodium());
  std::string seed(kEd25519SeedBytes, '\0');
  randombytes_buf(seed.data(), seed.size());
  absl::StatusOr<SigningKey> key = FromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

[[nodiscard]] absl::StatusOr<SigningKey> SigningKey::FromSeed(absl::string_view seed) {
  TF_RETURN_IF_ERROR(InitSodium());
  if (seed.size() != kEd25519SeedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an Ed25519 seed is ", kEd25519SeedBytes, " bytes, not ", seed.size()));
  }
  SigningKey key;
  std::memcpy(key.seed_.data(), seed.data(), seed.size());
  crypto_sign_seed_keypair(key.public_key_.data(), key.secret_key_.data(), key.seed_.data());
  return key;
}

SigningKey::~SigningKey() {
  sodium_memzero(secret_key_.data(), secret_key_.size());
  sodium_memzero(seed_.data(), seed_.size());
}

std::string SigningKey::Sign(absl::string_view artifact_hash_hex,
                             absl::string_view entry_name) const {
  const std::string message = ArtifactSigningMessage(artifact_hash_hex, entry_name);
  std::string signature(crypto_sign_BYTES, '\0');
  crypto_sign_detached(reinterpret_cast<unsigned char*>(signature.data()), nullptr,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                       secret_key_.data());
  return signature;
}

[[nodiscard]] absl::Status SigningKey::WriteFile(const std::string& path) const {
  return ReplaceFileAtomically(
      path,
      absl::StrCat("# TuneFleet builder signing key (Ed25519). Public key: ", public_key_text(),
                   "\n", kSecretKeyTag, " ",
                   absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(seed_.data()),
                                                        seed_.size())),
                   "\n"),
      0600);
}

[[nodiscard]] absl::StatusOr<SigningKey> LoadSigningKey(const std::string& path) {
  absl::StatusOr<std::string> text = ReadPrivateFileToString(path, kMaxKeyFileBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("signing key file: ", text.status().message()));
  }
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    std::string seed;
    if (fields.size() != 2 || fields[0] != kSecretKeyTag ||
        !absl::Base64Unescape(fields[1], &seed) || seed.size() != kEd25519SeedBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "signing key file ", path, ": expected one line '", kSecretKeyTag, " <base64 of ",
          kEd25519SeedBytes, " bytes>' (make one with `tunefleet keys new`)"));
    }
    absl::StatusOr<SigningKey> key = SigningKey::FromSeed(seed);
    sodium_memzero(seed.data(), seed.size());
    return key;
  }
  return absl::InvalidArgumentError(absl::StrCat("signing key file ", path, " holds no key"));
}

[[nodiscard]] absl::StatusOr<PinnedKeys> PinnedKeys::FromTexts(
    const std::vector<std::string>& texts) {
  TF_RETURN_IF_ERROR(InitSodium());
  PinnedKeys pinned;
  for (const std::string& text : texts) {
    TF_ASSIGN_OR_RETURN(auto key, ParsePublicKeyText(text));
    if (pinned.Contains(text)) continue;
    pinned.keys_.push_back(key);
    pinned.texts_.push_back(text);
  }
  return pinned;
}

PinnedKeys PinnedKeys::RefuseAll() {
  PinnedKeys keys;
  keys.refuse_all_ = true;
  return keys;
}

bool PinnedKeys::Contains(absl::string_view key_text) const {
  for (const std::string& text : texts_) {
    if (text == key_text) return true;
  }
  return false;
}

[[nodiscard]] absl::Status PinnedKeys::Verify(absl::string_view bytes,
                                              absl::string_view artifact_hash_hex,
                                              absl::string_view entry_name,
                                              absl::string_view signature,
                                              absl::string_view signer) const {
  if (refuse_all_) {
    return absl::PermissionDeniedError(
        "artifact refused: the tracker's pinned builder keys could not be read");
  }
  if (signature.empty() || signer.empty()) {
    return absl::PermissionDeniedError(
        "artifact refused: it is unsigned, and this fleet pins builder signing keys");
  }
  size_t index = texts_.size();
  for (size_t i = 0; i < texts_.size(); ++i) {
    if (texts_[i] == signer) index = i;
  }
  if (index == texts_.size()) {
    return absl::PermissionDeniedError(absl::StrCat("artifact refused: signed by ", signer,
                                                    ", which is not a pinned builder key"));
  }
  if (!bytes.empty() && Sha256Hex(bytes) != artifact_hash_hex) {
    return absl::PermissionDeniedError(
        "artifact refused: its bytes do not hash to the signed artifact_hash (tampered)");
  }
  const std::string message = ArtifactSigningMessage(artifact_hash_hex, entry_name);
  if (signature.size() != crypto_sign_BYTES ||
      crypto_sign_verify_detached(reinterpret_cast<const unsigned char*>(signature.data()),
                                  reinterpret_cast<const unsigned char*>(message.data()),
                                  message.size(), keys_[index].data()) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("artifact refused: the signature does not verify against pinned key ", signer,
                     " (tampered artifact, hash or entry name)"));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<PinnedKeys> LoadPinnedKeys(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxKeyFileBytes));
  std::vector<std::string> texts;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("pinned keys file ", path, " line ",
                                                     line_number,
                                                     ": expected '<name> ed25519:<base64>'"));
    }
    if (absl::StatusOr<std::array<unsigned char, kEd25519PublicKeyBytes>> key =
            ParsePublicKeyText(fields[1]);
        !key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("pinned keys file ", path, " line ",
                                                     line_number, ": ", key.status().message()));
    }
    texts.emplace_back(fields[1]);
  }
  if (texts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("pinned keys file ", path, " holds no key"));
  }
  return PinnedKeys::FromTexts(texts);
}

[[nodiscard]] absl::Status WritePinnedKeysFile(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string text = "# TuneFleet pinned builder keys: <name> ed25519:<base64> per line.\n";
  for (const auto& [name, key] : keys) absl::StrAppend(&text, name, " ", key, "\n");
  return ReplaceFileAtomically(path, text, 0644);
}

}  // namespace tunefleet
