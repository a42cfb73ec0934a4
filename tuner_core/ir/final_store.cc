#include "tuner_core/ir/final_store.h"

#include <utility>

namespace tunefleet {
namespace ir {

Stmt FinalStore(const std::string& buffer, Expr value, Expr index, Expr channel, Expr when) {
  Stmt store = Store::Make(buffer, std::move(value), std::move(index));
  if (when.defined()) store = LetStmt::Make(kFinalStoreWhen, std::move(when), std::move(store));
  return LetStmt::Make(kFinalStoreChannel, std::move(channel), std::move(store));
}

std::optional<FinalStoreParts> MatchFinalStore(const LetStmt* channel) {
  if (channel == nullptr || channel->var != kFinalStoreChannel) return std::nullopt;
  FinalStoreParts parts;
  parts.channel = channel->value;
  Stmt inner = channel->body;
  if (const LetStmt* when = inner.as<LetStmt>(); when != nullptr && when->var == kFinalStoreWhen) {
    parts.when = when->value;
    inner = when->body;
  }
  parts.store = inner.as<Store>();
  if (parts.store == nullptr) return std::nullopt;
  return parts;
}

}  // namespace ir
}  // namespace tunefleet
