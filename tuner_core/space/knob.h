// Internal to the config_space library: how a knob and the table of a
// space's knobs are stored, and the small helpers its files share. Users of
// config spaces include config_space.h, never this.
#ifndef TUNEFLEET_TUNER_CORE_SPACE_KNOB_H_
#define TUNEFLEET_TUNER_CORE_SPACE_KNOB_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "tuner_core/space/config_space.h"

namespace tunefleet {
namespace config_space_internal {

// One knob and the full, ordered list of its choices. Exactly one of the
// choice lists is filled, according to `kind` (and `is_string` for "ot").
struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kOther;
  std::string description;  // for ConfigSpace::Describe()
  int64_t size = 0;
  // DefineAddedKnob: a config JSON that omits the knob takes its first choice.
  bool absent_is_first = false;

  bool is_string = false;                             // kOther only
  std::vector<int64_t> ints;                          // kOther, int candidates
  std::vector<std::string> strings;                   // kOther, string candidates
  std::vector<std::vector<int64_t>> splits;           // kSplit: sizes, outer first
  std::vector<std::vector<int>> orders;               // kReorder
  std::vector<std::vector<std::string>> annotations;  // kAnnotate
};

// ConfigSpace::DeclareInert: while knob `when` has choice `choice`, the
// knobs `inert` (indices into KnobTable::knobs) do not change the kernel.
struct InertRule {
  int when = 0;
  int64_t choice = 0;
  std::vector<int> inert;
};

struct KnobTable {
  std::vector<std::shared_ptr<const Knob>> knobs;
  absl::flat_hash_map<std::string, int> index_by_name;
  int64_t size = 1;  // product of the knob sizes
  std::vector<InertRule> inert_rules;
  // ConfigSpace::DeclareSameKernelChoices: per knob (by index), a label per
  // choice, choices of one label building one kernel; absent: all differ.
  absl::flat_hash_map<int, std::vector<int64_t>> kernel_labels;
};

// The table of a space with no knobs.
const std::shared_ptr<const KnobTable>& EmptyTable();

// A kind's tag in config JSON ("ot", "sp", "re", "an") and its word in
// error messages ("other", "split", "reorder", "annotate").
struct KnobKindNames {
  const char* tag;
  const char* word;
};
KnobKindNames NamesOf(KnobKind kind);
const char* KindWord(KnobKind kind);

// Python's repr of a string, and of a list of already printed items, which
// is what AutoTVM's printout shows.
std::string PyRepr(const std::string& s);
std::string PyList(const std::vector<std::string>& items);

// InvalidArgument for an empty knob name.
[[nodiscard]] absl::Status CheckName(const std::string& name);

// Position of `value` in `choices`, or -1.
template <typename T>
int64_t FindChoice(const std::vector<T>& choices, const T& value) {
  auto it = std::find(choices.begin(), choices.end(), value);
  return it == choices.end() ? -1 : static_cast<int64_t>(it - choices.begin());
}

}  // namespace config_space_internal
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SPACE_KNOB_H_
