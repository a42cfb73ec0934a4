#include "cli/credential_commands.h"

#include <sys/stat.h>

#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/signing.h"
#include "common/status_macros.h"
#include "tracker/auth.h"

ABSL_FLAG(std::string, role, "",
          "token: the role of the token (user, builder, agent, tuner, admin)");
ABSL_FLAG(std::string, device_keys, "",
          "token: comma-separated device keys an agent token may register as (empty: any)");
ABSL_FLAG(std::string, identity, "",
          "token: the client certificate URI SAN the token is bound to (required off loopback)");
ABSL_FLAG(std::string, tokens, "", "token new: the tracker's token file to append the line to");
ABSL_FLAG(std::string, token_out, "", "token new: write the token here (0600); empty: stdout");
ABSL_FLAG(std::string, signing_key_out, "", "keys new: write the builder's signing key here");
ABSL_FLAG(
    std::string, pinned_keys, "",
    "keys new: append the public key to this pinned keys file (the tracker's --builder_keys)");
ABSL_FLAG(std::string, key_name, "builder", "keys new: the name the key is pinned under");

namespace tunefleet {
namespace {

[[nodiscard]] absl::StatusOr<TokenScope> ScopeFromFlags() {
  TokenScope scope;
  const std::string keys = absl::GetFlag(FLAGS_device_keys);
  if (!keys.empty()) scope.device_keys = absl::StrSplit(keys, ',', absl::SkipEmpty());
  scope.identity = absl::GetFlag(FLAGS_identity);
  return scope;
}

// Appends `line` to a private file (created 0600), replacing it atomically.
[[nodiscard]] absl::Status AppendLine(const std::string& path, const std::string& line,
                                      mode_t mode) {
  std::string text;
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    TF_ASSIGN_OR_RETURN(text, ReadFileToString(path, kMaxTokenFileBytes));
    if (!text.empty() && text.back() != '\n') text += '\n';
    mode = info.st_mode & 0777;
  }
  absl::StrAppend(&text, line, "\n");
  return ReplaceFileAtomically(path, text, mode);
}

}  // namespace

[[nodiscard]] absl::Status RunTokenCommand(const std::vector<std::string>& args, std::istream& in,
                                           std::ostream& out) {
  const std::string sub = args.empty() ? "" : args[0];
  if (sub != "new" && sub != "hash") {
    return absl::InvalidArgumentError("usage: tunefleet token new|hash --role R [...]");
  }
  if (absl::GetFlag(FLAGS_role).empty()) {
    return absl::InvalidArgumentError("--role is required (user, builder, agent, tuner, admin)");
  }
  TF_ASSIGN_OR_RETURN(const Role role, ParseRole(absl::GetFlag(FLAGS_role)));
  TF_ASSIGN_OR_RETURN(const TokenScope scope, ScopeFromFlags());
  if (!scope.device_keys.empty() && role != Role::kAgent) {
    return absl::InvalidArgumentError("--device_keys scopes agent tokens only");
  }
  if (sub == "hash") {
    std::string token;
    std::getline(in, token);
    TF_ASSIGN_OR_RETURN(const std::string line,
                        TokenFileLine(role, absl::StripAsciiWhitespace(token), scope));
    out << line << "\n";
    return absl::OkStatus();
  }
  TokenSet fresh;
  TF_ASSIGN_OR_RETURN(const std::string token, fresh.AddGenerated(role, scope));
  TF_ASSIGN_OR_RETURN(const std::string line, TokenFileLine(role, token, scope));
  const std::string tokens_path = absl::GetFlag(FLAGS_tokens);
  if (!tokens_path.empty()) TF_RETURN_IF_ERROR(AppendLine(tokens_path, line, 0600));
  const std::string token_out = absl::GetFlag(FLAGS_token_out);
  if (token_out.empty()) {
    out << token << "\n";
  } else {
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(token_out, token + "\n", 0600));
    out << "wrote the token to " << token_out << "\n";
  }
  if (tokens_path.empty()) {
    out << "token file line (for the tracker's --token_file):\n" << line << "\n";
  } else {
    out << "appended its hash to " << tokens_path << "; restart the tracker to load it\n";
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status RunKeysCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty() || args[0] != "new") {
    return absl::InvalidArgumentError(
        "usage: tunefleet keys new --signing_key_out FILE [--pinned_keys FILE --key_name N]");
  }
  const std::string key_out = absl::GetFlag(FLAGS_signing_key_out);
  if (key_out.empty()) return absl::InvalidArgumentError("--signing_key_out is required");
  TF_ASSIGN_OR_RETURN(const SigningKey key, SigningKey::Generate());
  TF_RETURN_IF_ERROR(key.WriteFile(key_out));
  out << "wrote the signing key to " << key_out << " (give it to the builder: --signing_key)\n"
      << "public key: " << key.public_key_text() << "\n";
  const std::string pinned = absl::GetFlag(FLAGS_pinned_keys);
  if (!pinned.empty()) {
    TF_RETURN_IF_ERROR(AppendLine(
        pinned, absl::StrCat(absl::GetFlag(FLAGS_key_name), " ", key.public_key_text()), 0644));
    out << "pinned it in " << pinned << " (the tracker's --builder_keys)\n";
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
