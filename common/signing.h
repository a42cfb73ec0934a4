// Builder-signed artifacts: Ed25519 signatures (libsodium) over what a
// builder compiled, so that a device agent loads only code that a builder the
// tracker pins has produced. A tampered, unsigned or foreign-signed artifact
// is refused before anything is written to disk or loaded.
//
// Builder side:
//   TF_ASSIGN_OR_RETURN(SigningKey key, LoadSigningKey("/etc/tunefleet/builder.key"));
//   result.set_signature(key.Sign(artifact_hash_hex, entry_name));
//   result.set_signer_key(key.public_key_text());
// Agent side (keys handed over by the tracker at registration):
//   TF_ASSIGN_OR_RETURN(PinnedKeys pinned, PinnedKeys::FromTexts(registered.builder_keys()));
//   TF_RETURN_IF_ERROR(pinned.Verify(bytes, hash_hex, entry_name, signature, signer));
//
// Key files: a signing key file holds one line "ed25519-secret <base64 of the
// 32-byte seed>", mode 0600 (refused when group/world readable); a pinned
// keys file holds one "<name> ed25519:<base64 public key>" per line, '#'
// comments allowed. `tunefleet keys new` writes a pair.
#ifndef TUNEFLEET_COMMON_SIGNING_H_
#define TUNEFLEET_COMMON_SIGNING_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

inline constexpr size_t kEd25519PublicKeyBytes = 32;
inline constexpr size_t kEd25519SeedBytes = 32;
inline constexpr size_t kEd25519SignatureBytes = 64;

// libsodium's sodium_init(), once per process; Internal if it fails.
[[nodiscard]] absl::Status InitSodium();

// "ed25519:<base64 of the 32-byte public key>", how keys are pinned and sent.
std::string PublicKeyText(const std::array<unsigned char, kEd25519PublicKeyBytes>& key);
[[nodiscard]] absl::StatusOr<std::array<unsigned char, kEd25519PublicKeyBytes>> ParsePublicKeyText(
    absl::string_view text);

// What is signed: a domain tag, the artifact's SHA-256 (hex, as in
// BuildResult.artifact_hash) and its entry point, so a signature for one
// artifact cannot be replayed onto other bytes or another symbol.
std::string ArtifactSigningMessage(absl::string_view artifact_hash_hex,
                                   absl::string_view entry_name);

class SigningKey {
 public:
  // A fresh key pair from libsodium's CSPRNG.
  [[nodiscard]] static absl::StatusOr<SigningKey> Generate();
  // From a 32-byte seed.
  [[nodiscard]] static absl::StatusOr<SigningKey> FromSeed(absl::string_view seed);

  // The detached 64-byte signature of ArtifactSigningMessage(...).
  std::string Sign(absl::string_view artifact_hash_hex, absl::string_view entry_name) const;
  std::string public_key_text() const { return PublicKeyText(public_key_); }

  // Writes the secret key file (0600, atomically).
  [[nodiscard]] absl::Status WriteFile(const std::string& path) const;

  SigningKey(const SigningKey&) = default;
  SigningKey& operator=(const SigningKey&) = default;
  ~SigningKey();

 private:
  SigningKey() = default;
  std::array<unsigned char, kEd25519PublicKeyBytes> public_key_{};
  std::array<unsigned char, 64> secret_key_{};  // libsodium's seed || public key form
  std::array<unsigned char, kEd25519SeedBytes> seed_{};
};

// Reads a signing key file; FailedPrecondition if others may read it (with
// the chmod that fixes it), InvalidArgument naming the file if malformed.
[[nodiscard]] absl::StatusOr<SigningKey> LoadSigningKey(const std::string& path);

// The builder public keys an agent accepts signatures from.
class PinnedKeys {
 public:
  PinnedKeys() = default;
  // From "ed25519:..." texts (Registered.builder_keys); InvalidArgument
  // naming the bad one.
  [[nodiscard]] static absl::StatusOr<PinnedKeys> FromTexts(const std::vector<std::string>& texts);

  // OK only if `signer` is pinned, SHA-256(bytes) is `artifact_hash_hex`
  // and `signature` verifies. PermissionDenied otherwise, saying which of
  // the three failed (unsigned, unknown signer, hash mismatch, bad signature).
  // `bytes` may be empty when the caller checked the hash itself.
  [[nodiscard]] absl::Status Verify(absl::string_view bytes, absl::string_view artifact_hash_hex,
                                    absl::string_view entry_name, absl::string_view signature,
                                    absl::string_view signer) const;

  // Pins nothing any signature could verify against: every artifact is
  // refused (what an agent uses when the tracker's keys do not parse).
  static PinnedKeys RefuseAll();

  bool Contains(absl::string_view key_text) const;
  bool empty() const { return keys_.empty() && !refuse_all_; }
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::vector<std::array<unsigned char, kEd25519PublicKeyBytes>> keys_;
  std::vector<std::string> texts_;
  bool refuse_all_ = false;
};

// Reads a pinned keys file ("<name> ed25519:<base64>" per line).
[[nodiscard]] absl::StatusOr<PinnedKeys> LoadPinnedKeys(const std::string& path);

// Writes a pinned keys file holding `name` -> `key_text` (0644, atomically).
[[nodiscard]] absl::Status WritePinnedKeysFile(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& keys);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SIGNING_H_
