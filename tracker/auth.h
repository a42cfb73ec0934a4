// Per-role bearer tokens: who may submit jobs, and who may register as a
// builder, agent or tuner. The tracker loads a token file, authenticates the
// "authorization" metadata of every call and stream, and checks the role
// against the action; clients send BearerHeader(token).
//
//   TF_ASSIGN_OR_RETURN(TokenSet tokens, LoadTokenFile("/etc/tunefleet/tokens"));
//   TF_ASSIGN_OR_RETURN(Role role, AuthenticateContext(&tokens, *context));
//   if (!Allowed(role, Action::kRegisterAgent)) return PermissionDenied(...);
//
// Token file: one "<role> <token>" per line, roles user, builder, agent,
// tuner and admin; a role may have several tokens (one per board, say);
// blank lines and lines starting with '#' are ignored. Tokens are at least 16
// characters with no whitespace. The file must not be readable or writable
// by others (chmod 600). `tunefleet up` makes one with TokenSet::Generate()
// and WriteTokenFile(). No message here ever contains a token.
#ifndef TUNEFLEET_TRACKER_AUTH_H_
#define TUNEFLEET_TRACKER_AUTH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ServerContextBase;
}  // namespace grpc

namespace tunefleet {

enum class Role { kUser, kBuilder, kAgent, kTuner, kAdmin };

enum class Action {
  kSubmit,           // SubmitJob
  kQuery,            // job status, watch, devices, queue summary, records
  kCancel,           // CancelJob
  kRegisterBuilder,  // open a Connect stream as a builder
  kRegisterAgent,    // ... as a device agent
  kRegisterTuner,    // ... as a tuner
};

// "user", "builder", "agent", "tuner", "admin".
absl::string_view RoleName(Role role);
// The inverse of RoleName; InvalidArgument naming the valid roles otherwise.
[[nodiscard]] absl::StatusOr<Role> ParseRole(absl::string_view name);

// admin: everything. user: submit, query, cancel. builder, agent, tuner:
// register as themselves only.
bool Allowed(Role role, Action action);

// Tokens must be at least this long.
inline constexpr size_t kMinTokenLength = 16;
// The gRPC metadata key carrying BearerHeader(token).
inline constexpr char kAuthorizationMetadataKey[] = "authorization";

class TokenSet {
 public:
  // An empty set authenticates nobody.
  TokenSet() = default;

  // One fresh token per role: 32 bytes from /dev/urandom, hex encoded.
  [[nodiscard]] static absl::StatusOr<TokenSet> Generate();

  // Adds a token. InvalidArgument if it is shorter than kMinTokenLength,
  // holds whitespace or control characters, or is already in the set.
  [[nodiscard]] absl::Status Add(Role role, std::string token);

  // The role of "Bearer <token>" (scheme case-insensitive). Unauthenticated,
  // saying what was wrong but never echoing the token, if the header is
  // missing, not a bearer token, or the token is unknown. Compares in time
  // independent of where a presented token differs from a stored one.
  [[nodiscard]] absl::StatusOr<Role> Authenticate(absl::string_view authorization_header) const;

  // The first token of `role`, or "" if it has none (for `tunefleet up` to
  // hand to the daemons it starts).
  std::string TokenFor(Role role) const;

  // Writes every token as a token file readable by its owner only (0600),
  // replacing `path` atomically.
  [[nodiscard]] absl::Status WriteTokenFile(const std::string& path) const;
  // Writes <dir>/<role>.token (user, builder, agent, tuner) holding that
  // role's first token, 0600, each replaced atomically: what a daemon's
  // --token_file reads.
  [[nodiscard]] absl::Status WriteRoleTokenFiles(const std::string& dir) const;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Role role;
    std::string token;
  };
  std::vector<Entry> entries_;
};

// Reads a token file (format above). Errors name the file and line;
// FailedPrecondition if others may read or write it, InvalidArgument if it
// holds no token.
[[nodiscard]] absl::StatusOr<TokenSet> LoadTokenFile(const std::string& path);

// "Bearer <token>", the value of the authorization header or metadata.
std::string BearerHeader(absl::string_view token);

// Authenticates a call from its "authorization" metadata. `tokens` nullptr
// means authentication is off and every caller is admin (the tracker allows
// that only when it listens on loopback).
[[nodiscard]] absl::StatusOr<Role> AuthenticateContext(const TokenSet* tokens,
                                                       const grpc::ServerContextBase& context);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_AUTH_H_
