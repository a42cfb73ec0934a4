// `tunefleet token ...` and `tunefleet keys ...`: the credentials an
// operator hands out.
//
//   tunefleet token new --role agent --device_keys rk3399 --tokens /etc/tunefleet/tokens
//       --token_out board7.token [--identity spiffe://fleet/agent/board-7]
//     makes a token, appends its hashed line to the tracker's token file and
//     writes the token (0600) for the board; the tracker re-reads the file on
//     restart.
//   tunefleet token hash --role user < token.txt
//     prints the token file line for a token you chose.
//   tunefleet keys new --signing_key_out builder.key --pinned_keys /etc/tunefleet/builder_keys
//       [--key_name builder-1]
//     makes a builder's Ed25519 signing key and pins its public key.
#ifndef TUNEFLEET_CLI_CREDENTIAL_COMMANDS_H_
#define TUNEFLEET_CLI_CREDENTIAL_COMMANDS_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {

// `args` are the positional arguments after the command ("new", "hash").
[[nodiscard]] absl::Status RunTokenCommand(const std::vector<std::string>& args, std::istream& in,
                                           std::ostream& out);
[[nodiscard]] absl::Status RunKeysCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_CREDENTIAL_COMMANDS_H_
