#include "tuner_core/space/knob.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {
namespace config_space_internal {

const std::shared_ptr<const KnobTable>& EmptyTable() {
  static const auto* const table =
      new std::shared_ptr<const KnobTable>(std::make_shared<KnobTable>());
  return *table;
}

KnobKindNames NamesOf(KnobKind kind) {
  // Indexed by KnobKind, in its order.
  static constexpr KnobKindNames kNames[] = {
      {"ot", "other"}, {"sp", "split"}, {"re", "reorder"}, {"an", "annotate"}};
  static_assert(std::size(kNames) == static_cast<size_t>(KnobKind::kAnnotate) + 1);
  return kNames[static_cast<int>(kind)];
}

const char* KindWord(KnobKind kind) { return NamesOf(kind).word; }

// Python's repr of a string, which is what AutoTVM's printout shows.
std::string PyRepr(const std::string& s) { return absl::StrCat("'", s, "'"); }

std::string PyList(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

[[nodiscard]] absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("knob name must not be empty");
  return absl::OkStatus();
}

}  // namespace config_space_internal
}  // namespace tunefleet
