// Per-role bearer tokens: who may submit jobs, and who may register as a
// builder, agent or tuner. The tracker loads a token file, authenticates the
// "authorization" metadata of every call and stream, and checks the role
// against the action; clients send BearerHeader(token).
//
//   TF_ASSIGN_OR_RETURN(TokenSet tokens, LoadTokenFile("/etc/tunefleet/tokens"));
//   TF_ASSIGN_OR_RETURN(Principal who, AuthenticateContext(&tokens, *context));
//   if (!Allowed(who.role, Action::kRegisterAgent)) return PermissionDenied(...);
//
// The tracker's token file holds hashes only, one per line:
//   <role> <argon2id hash> [id=<hex>] [keys=<key>,<key>] [identity=<URI SAN>]
//          [jobs=<n>] [trials_per_hour=<n>] [agent_share=<fraction>]
// roles user, builder, agent, tuner and admin; a role may have several
// tokens (one per board, say); blank lines and '#' comments are ignored.
//   - The hash is libsodium's crypto_pwhash_str (Argon2id) of the token; a
//     line holding a plaintext token is refused. `tunefleet token new`
//     makes a token and its line; `tunefleet token hash` hashes one.
//   - id=: the public id generated tokens carry ("tf_<id>_<secret>"), so a
//     presented token is checked against its own line only.
//   - keys=: an agent token may register only as these device keys (an
//     rk3399 board's token cannot register as h100).
//   - jobs=, trials_per_hour=, agent_share=: a user's (or admin's) quota
//     (UserQuota): jobs queued or running at once, builds dispatched in the
//     trailing hour, and the share of a key's agents measuring its trials
//     at once.
//   - identity=: the token is accepted only from a TLS client whose
//     certificate has this URI SAN (e.g. spiffe://fleet/agent/board-7). Off
//     loopback the tracker requires it on every line.
// The file must not be readable or writable by others (chmod 600). No
// message here ever contains a token. Verified tokens are remembered by
// their SHA-256 for the life of the process, so Argon2 runs once per token.
#ifndef TUNEFLEET_TRACKER_AUTH_H_
#define TUNEFLEET_TRACKER_AUTH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"

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

// What a token may do beyond its role.
// What a user's jobs may take of the fleet (jobs=, trials_per_hour=,
// agent_share= on its token line); 0 = unlimited. The tracker copies it
// into each job it submits (JobSpec.owner_quota) and enforces it there.
struct UserQuota {
  int32_t max_jobs_in_flight = 0;
  int64_t max_trials_per_hour = 0;
  double max_agent_share = 0;  // in (0, 1]
  bool unlimited() const {
    return max_jobs_in_flight == 0 && max_trials_per_hour == 0 && max_agent_share == 0;
  }
};

struct TokenScope {
  // Agents: the device keys it may register as; empty = any key.
  std::vector<std::string> device_keys;
  // The URI SAN the caller's client certificate must carry; empty = unbound.
  std::string identity;
  // Users and admins: their quota.
  UserQuota quota;
};

// Who an authenticated caller is.
struct Principal {
  Role role = Role::kUser;
  TokenScope scope;
  // Which token: "tf_<id>" for tokens of that shape, else "token:" and a
  // digest of its line's hash; empty for the tracker without a token file
  // (loopback, everyone an admin). Jobs belong to it (JobSpec.owner).
  std::string user;

  // Whether an agent with this token may register as `device_key`;
  // PermissionDenied naming the keys it may use otherwise.
  [[nodiscard]] absl::Status CheckDeviceKey(absl::string_view device_key) const;
};

class TokenSet {
 public:
  // An empty set authenticates nobody.
  TokenSet();
  TokenSet(TokenSet&&) noexcept;
  TokenSet& operator=(TokenSet&&) noexcept;
  ~TokenSet();

  // One fresh token per role, "tf_<16 hex id>_<64 hex secret>" from
  // /dev/urandom, hashed at once.
  [[nodiscard]] static absl::StatusOr<TokenSet> Generate();
  // A fresh token for `role` and `scope`, added to this set; returns it.
  [[nodiscard]] absl::StatusOr<std::string> AddGenerated(Role role, TokenScope scope = {});

  // Adds a token (hashed here; the plaintext is kept in memory only, for
  // TokenFor). InvalidArgument if it is shorter than kMinTokenLength, holds
  // whitespace or control characters, or is already in the set.
  [[nodiscard]] absl::Status Add(Role role, std::string token, TokenScope scope = {});

  // The role and scope of "Bearer <token>" (scheme case-insensitive).
  // Unauthenticated, saying what was wrong but never echoing the token, if
  // the header is missing, not a bearer token, or the token is unknown.
  // A token seen before costs a hash lookup; a new one costs Argon2 (64
  // MiB, tens of ms) against the lines it can match, and failed checks are
  // rationed: kArgon2PerPeerBurst per `peer` (its host), then
  // kArgon2PerPeerPerSecond, and kArgon2Burst then kArgon2PerSecond for all
  // peers together; a peer past them gets ResourceExhausted, without
  // hashing, until they refill. Refusals are remembered (bounded), so a
  // repeated bad token costs nothing.
  [[nodiscard]] absl::StatusOr<Principal> Authenticate(absl::string_view authorization_header,
                                                       absl::string_view peer = "") const;

  // The clock the rationing refills by (default SystemClock()); tests
  // pass a FakeClock so that slow hashing cannot refill a bucket. Not
  // owned; must outlive the set.
  void set_clock(ClockInterface* clock) { clock_ = clock; }

  static constexpr double kArgon2PerPeerBurst = 4;
  static constexpr double kArgon2PerPeerPerSecond = 1;
  static constexpr double kArgon2Burst = 16;
  static constexpr double kArgon2PerSecond = 8;

  // The first token of `role` added in this process, or "" if none (for
  // `tunefleet up` to hand to the daemons it starts).
  std::string TokenFor(Role role) const;

  // Writes every entry as a token file line (hash, id, scope; never a
  // token) readable by its owner only (0600), replacing `path` atomically.
  [[nodiscard]] absl::Status WriteTokenFile(const std::string& path) const;
  // Writes <dir>/<role>.token (user, builder, agent, tuner) holding that
  // role's first token, 0600, each replaced atomically: what a daemon's
  // --token_file reads.
  [[nodiscard]] absl::Status WriteRoleTokenFiles(const std::string& dir) const;

  // 1-based positions of entries with no identity= binding.
  std::vector<int> UnboundEntries() const;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

 private:
  friend absl::StatusOr<TokenSet> LoadTokenFile(const std::string& path);
  struct Entry {
    Role role;
    std::string hash;  // crypto_pwhash_str output
    std::string id;    // from "tf_<id>_..." tokens; "" for others
    TokenScope scope;
    std::string plaintext;  // only for tokens added in this process
  };
  struct Cache;
  [[nodiscard]] absl::Status AddEntry(Entry entry);
  static Principal PrincipalOf(const Entry& entry);
  std::vector<Entry> entries_;
  std::unique_ptr<Cache> cache_;
  ClockInterface* clock_ = nullptr;  // null: SystemClock()
};

// The token file line for `token` (hashing it): what `tunefleet token hash`
// prints.
[[nodiscard]] absl::StatusOr<std::string> TokenFileLine(Role role, absl::string_view token,
                                                        const TokenScope& scope);

// Reads a token file (format above). Errors name the file and line;
// FailedPrecondition if others may read or write it, InvalidArgument if it
// holds no token.
[[nodiscard]] absl::StatusOr<TokenSet> LoadTokenFile(const std::string& path);

// "Bearer <token>", the value of the authorization header or metadata.
std::string BearerHeader(absl::string_view token);

// What a call presents: its "authorization" metadata entries, its peer and
// its client certificate's URI SANs. Read from the context cheaply, on the
// thread gRPC called in on, so the check itself (Argon2 for a new token) can
// run elsewhere.
struct CallCredentials {
  std::vector<std::string> authorization;
  std::string peer;
  std::vector<std::string> uri_sans;
};
CallCredentials CredentialsOf(const grpc::ServerContextBase& context);

// Authenticates a call from its "authorization" metadata and, for a token
// bound to an identity, the client certificate's URI SANs. `tokens` nullptr
// means authentication is off and every caller is admin (the tracker allows
// that only when it listens on loopback).
[[nodiscard]] absl::StatusOr<Principal> AuthenticateCredentials(const TokenSet* tokens,
                                                                const CallCredentials& call);
// AuthenticateCredentials(tokens, CredentialsOf(context)).
[[nodiscard]] absl::StatusOr<Principal> AuthenticateContext(const TokenSet* tokens,
                                                            const grpc::ServerContextBase& context);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_AUTH_H_
