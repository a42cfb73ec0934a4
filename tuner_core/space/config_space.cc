#include "tuner_core/space/config_space.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "tuner_core/space/knob.h"
#include "tuner_core/space/knob_choices.h"

namespace tunefleet {
namespace {

using config_space_internal::CheckName;
using config_space_internal::EmptyTable;
using config_space_internal::InertRule;
using config_space_internal::KindWord;
using config_space_internal::Knob;
using config_space_internal::KnobTable;

// Finds a knob by name and checks its kind, for the Config::Get* accessors.
[[nodiscard]] absl::StatusOr<std::pair<const Knob*, int>> LookUpKnob(const KnobTable& table,
                                                                     const std::string& name,
                                                                     KnobKind kind) {
  auto it = table.index_by_name.find(name);
  if (it == table.index_by_name.end()) {
    return absl::NotFoundError(absl::StrCat("config has no knob named '", name, "'"));
  }
  const Knob& knob = *table.knobs[it->second];
  if (knob.kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", name, "' is a ", KindWord(knob.kind),
                                                   " knob, not a ", KindWord(kind), " knob"));
  }
  return std::make_pair(&knob, it->second);
}

}  // namespace

const char* KnobKindTag(KnobKind kind) { return config_space_internal::NamesOf(kind).tag; }

// ---------------------------------------------------------------- Config

Config::Config() : table_(EmptyTable()) {}

Config::Config(std::shared_ptr<const KnobTable> table, int64_t index, std::vector<int64_t> choices)
    : table_(std::move(table)), index_(index), choices_(std::move(choices)) {}

const KnobTable& Config::table() const { return table_ ? *table_ : *EmptyTable(); }

absl::StatusOr<int64_t> Config::GetInt(const std::string& name) const {
  TF_ASSIGN_OR_RETURN(auto found, LookUpKnob(table(), name, KnobKind::kOther));
  if (found.first->is_string) {
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' has string candidates; use GetString"));
  }
  return found.first->ints[choices_[found.second]];
}

absl::StatusOr<std::string> Config::GetString(const std::string& name) const {
  TF_ASSIGN_OR_RETURN(auto found, LookUpKnob(table(), name, KnobKind::kOther));
  if (!found.first->is_string) {
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", name, "' has int candidates; use GetInt"));
  }
  return found.first->strings[choices_[found.second]];
}

absl::StatusOr<std::vector<int64_t>> Config::GetSplit(const std::string& name) const {
  TF_ASSIGN_OR_RETURN(auto found, LookUpKnob(table(), name, KnobKind::kSplit));
  return found.first->splits[choices_[found.second]];
}

absl::StatusOr<std::vector<int>> Config::GetReorder(const std::string& name) const {
  TF_ASSIGN_OR_RETURN(auto found, LookUpKnob(table(), name, KnobKind::kReorder));
  return found.first->orders[choices_[found.second]];
}

absl::StatusOr<std::vector<std::string>> Config::GetAnnotate(const std::string& name) const {
  TF_ASSIGN_OR_RETURN(auto found, LookUpKnob(table(), name, KnobKind::kAnnotate));
  return found.first->annotations[choices_[found.second]];
}

// ---------------------------------------------------------------- ConfigSpace

ConfigSpace::ConfigSpace() : table_(EmptyTable()) {}

absl::Status ConfigSpace::AddKnob(std::shared_ptr<const Knob> knob) {
  TF_RETURN_IF_ERROR(CheckName(knob->name));
  if (table_->index_by_name.contains(knob->name)) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob->name, "' is already defined"));
  }
  // An ordinary knob after an added one would change old records' indices.
  if (!knob->absent_is_first && !table_->knobs.empty() && table_->knobs.back()->absent_is_first) {
    return absl::InvalidArgumentError(
        absl::StrCat("knob '", knob->name, "' comes after knob '", table_->knobs.back()->name,
                     "', which DefineAddedKnob added: added knobs come last"));
  }
  TF_CHECK(knob->size >= 1);
  if (table_->size > std::numeric_limits<int64_t>::max() / knob->size) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob->name, "' (", knob->size,
                                                   " choices) makes the space larger than 2^63 (",
                                                   table_->size, " configs before it)"));
  }
  auto table = std::make_shared<KnobTable>(*table_);
  table->size *= knob->size;
  table->index_by_name[knob->name] = static_cast<int>(table->knobs.size());
  table->knobs.push_back(std::move(knob));
  table_ = std::move(table);
  return absl::OkStatus();
}

absl::Status ConfigSpace::DefineKnob(const std::string& name, std::vector<int64_t> candidates) {
  TF_ASSIGN_OR_RETURN(auto knob, config_space_internal::MakeIntKnob(name, std::move(candidates)));
  return AddKnob(std::move(knob));
}

[[nodiscard]] absl::Status ConfigSpace::DefineAddedKnob(const std::string& name,
                                                        std::vector<int64_t> candidates) {
  TF_ASSIGN_OR_RETURN(auto knob, config_space_internal::MakeIntKnob(name, std::move(candidates)));
  auto added = std::make_shared<config_space_internal::Knob>(*knob);
  added->absent_is_first = true;
  return AddKnob(std::move(added));
}

absl::Status ConfigSpace::DefineKnob(const std::string& name, std::vector<std::string> candidates) {
  TF_ASSIGN_OR_RETURN(auto knob,
                      config_space_internal::MakeStringKnob(name, std::move(candidates)));
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineSplit(const std::string& name, int64_t extent,
                                      const SplitOptions& options) {
  TF_ASSIGN_OR_RETURN(auto knob, config_space_internal::MakeSplitKnob(name, extent, options));
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineReorder(const std::string& name, int num_axes,
                                        const std::string& policy,
                                        std::vector<std::vector<int>> candidates) {
  TF_ASSIGN_OR_RETURN(auto knob, config_space_internal::MakeReorderKnob(name, num_axes, policy,
                                                                        std::move(candidates)));
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineAnnotate(const std::string& name, int num_axes,
                                         const std::string& policy) {
  TF_ASSIGN_OR_RETURN(auto knob, config_space_internal::MakeAnnotateKnob(name, num_axes, policy));
  return AddKnob(std::move(knob));
}

int64_t ConfigSpace::size() const { return table_->size; }

int ConfigSpace::num_knobs() const { return static_cast<int>(table_->knobs.size()); }

const std::string& ConfigSpace::knob_name(int i) const {
  TF_CHECK(i >= 0 && i < num_knobs());
  return table_->knobs[i]->name;
}

KnobKind ConfigSpace::knob_kind(int i) const {
  TF_CHECK(i >= 0 && i < num_knobs());
  return table_->knobs[i]->kind;
}

int64_t ConfigSpace::knob_size(int i) const {
  TF_CHECK(i >= 0 && i < num_knobs());
  return table_->knobs[i]->size;
}

std::vector<int64_t> ConfigSpace::KnobDims() const {
  std::vector<int64_t> dims;
  dims.reserve(table_->knobs.size());
  for (const auto& knob : table_->knobs) dims.push_back(knob->size);
  return dims;
}

absl::StatusOr<Config> ConfigSpace::Get(int64_t index) const {
  if (index < 0 || index >= table_->size) {
    return absl::OutOfRangeError(
        absl::StrCat("config index ", index, " is outside [0, ", table_->size, ")"));
  }
  std::vector<int64_t> choices;
  choices.reserve(table_->knobs.size());
  int64_t rest = index;
  for (const auto& knob : table_->knobs) {  // first knob = least significant digit
    choices.push_back(rest % knob->size);
    rest /= knob->size;
  }
  return Config(table_, index, std::move(choices));
}

namespace {

// The most configs one kernel can have under `table`'s rules: every inert
// knob of every rule (any set of rules may hold at once) times the largest
// group of same-kernel choices of each other labelled knob.
int64_t MostEquivalent(const KnobTable& table) {
  std::vector<int> inert;
  for (const InertRule& rule : table.inert_rules) {
    inert.insert(inert.end(), rule.inert.begin(), rule.inert.end());
  }
  std::sort(inert.begin(), inert.end());
  inert.erase(std::unique(inert.begin(), inert.end()), inert.end());
  int64_t combinations = 1;
  for (int k : inert)
    combinations = std::min(combinations * table.knobs[k]->size, int64_t{1} << 40);
  for (const auto& [k, labels] : table.kernel_labels) {
    if (std::binary_search(inert.begin(), inert.end(), k)) continue;
    absl::flat_hash_map<int64_t, int64_t> group;
    int64_t largest = 1;
    for (int64_t label : labels) largest = std::max(largest, ++group[label]);
    combinations = std::min(combinations * largest, int64_t{1} << 40);
  }
  return combinations;
}

}  // namespace

[[nodiscard]] absl::Status ConfigSpace::DeclareInert(const std::string& when,
                                                     const std::string& value,
                                                     const std::vector<std::string>& inert) {
  auto when_it = table_->index_by_name.find(when);
  if (when_it == table_->index_by_name.end()) {
    return absl::InvalidArgumentError(absl::StrCat("DeclareInert: no knob '", when, "'"));
  }
  const Knob& when_knob = *table_->knobs[when_it->second];
  auto value_it = std::find(when_knob.strings.begin(), when_knob.strings.end(), value);
  if (!when_knob.is_string || value_it == when_knob.strings.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareInert: '", value, "' is not a string candidate of knob '", when, "'"));
  }
  InertRule rule;
  rule.when = when_it->second;
  rule.choice = value_it - when_knob.strings.begin();
  // Rules may not chain (a rule's condition inert under another, or the
  // reverse): equivalence would then join kernels that differ.
  std::vector<int> all_inert;  // of the other rules
  for (const InertRule& other : table_->inert_rules) {
    all_inert.insert(all_inert.end(), other.inert.begin(), other.inert.end());
  }
  if (std::find(all_inert.begin(), all_inert.end(), rule.when) != all_inert.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DeclareInert: knob '", when, "' is itself inert under another rule; rules may not chain"));
  }
  if (table_->kernel_labels.contains(rule.when)) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareInert: knob '", when,
                     "' has choices that build one kernel; it cannot be a condition"));
  }
  for (const std::string& name : inert) {
    auto it = table_->index_by_name.find(name);
    if (it == table_->index_by_name.end() || it->second == rule.when) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeclareInert: '", name, "' is not a knob other than '", when, "'"));
    }
    for (const InertRule& other : table_->inert_rules) {
      if (other.when == it->second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "DeclareInert: knob '", name, "' is another rule's condition; rules may not chain"));
      }
    }
    if (std::find(rule.inert.begin(), rule.inert.end(), it->second) == rule.inert.end()) {
      rule.inert.push_back(it->second);
    }
  }
  auto table = std::make_shared<KnobTable>(*table_);
  table->inert_rules.push_back(std::move(rule));
  if (MostEquivalent(*table) > kMaxEquivalent) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareInert: the knobs inert under ", when, "=", value,
                     " with the other rules and the same-kernel choices make more than ",
                     kMaxEquivalent, " configs one kernel"));
  }
  table_ = std::move(table);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status ConfigSpace::DeclareSameKernelChoices(
    const std::string& name, const std::vector<int64_t>& kernel_of) {
  auto it = table_->index_by_name.find(name);
  if (it == table_->index_by_name.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareSameKernelChoices: no knob '", name, "'"));
  }
  const int k = it->second;
  if (static_cast<int64_t>(kernel_of.size()) != table_->knobs[k]->size) {
    return absl::InvalidArgumentError(absl::StrCat("DeclareSameKernelChoices: ", kernel_of.size(),
                                                   " labels for the ", table_->knobs[k]->size,
                                                   " choices of '", name, "'"));
  }
  if (table_->kernel_labels.contains(k)) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareSameKernelChoices: '", name, "' was declared already"));
  }
  for (const InertRule& rule : table_->inert_rules) {
    if (rule.when == k) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeclareSameKernelChoices: '", name, "' is an inert rule's condition"));
    }
  }
  auto table = std::make_shared<KnobTable>(*table_);
  table->kernel_labels[k] = kernel_of;
  if (MostEquivalent(*table) > kMaxEquivalent) {
    return absl::InvalidArgumentError(
        absl::StrCat("DeclareSameKernelChoices: '", name,
                     "' with the inert rules and the other same-kernel choices makes more than ",
                     kMaxEquivalent, " configs one kernel"));
  }
  table_ = std::move(table);
  return absl::OkStatus();
}

std::vector<int64_t> ConfigSpace::EquivalentIndices(int64_t index) const {
  TF_CHECK(index >= 0 && index < table_->size);
  std::vector<int64_t> stride(table_->knobs.size());
  std::vector<int64_t> choice(table_->knobs.size());
  int64_t s = 1, rest = index;
  for (size_t k = 0; k < table_->knobs.size(); ++k) {  // first knob = least significant
    stride[k] = s;
    s *= table_->knobs[k]->size;
    choice[k] = rest % table_->knobs[k]->size;
    rest /= table_->knobs[k]->size;
  }
  // Per knob, the choices that build the same kernel as choice[k]: every
  // choice of a knob inert under a rule that holds, the choices of the same
  // label of a labelled knob, else choice[k] alone.
  std::vector<std::vector<int64_t>> same(table_->knobs.size());
  for (const InertRule& rule : table_->inert_rules) {
    if (choice[rule.when] != rule.choice) continue;
    for (int k : rule.inert) {
      if (!same[k].empty()) continue;
      for (int64_t c = 0; c < table_->knobs[k]->size; ++c) same[k].push_back(c);
    }
  }
  for (const auto& [k, labels] : table_->kernel_labels) {
    if (!same[k].empty()) continue;
    for (int64_t c = 0; c < static_cast<int64_t>(labels.size()); ++c) {
      if (labels[c] == labels[choice[k]]) same[k].push_back(c);
    }
  }
  std::vector<int> varying;  // knobs with more than one choice, as a mixed-radix counter
  for (size_t k = 0; k < same.size(); ++k) {
    if (same[k].size() > 1) varying.push_back(static_cast<int>(k));
  }
  std::vector<int64_t> out = {index};
  if (varying.empty()) return out;
  int64_t base = index;
  for (int k : varying) base -= choice[k] * stride[k];
  std::vector<size_t> digit(varying.size(), 0);
  for (;;) {
    int64_t at = base;
    for (size_t d = 0; d < varying.size(); ++d)
      at += same[varying[d]][digit[d]] * stride[varying[d]];
    if (at != index) out.push_back(at);
    size_t d = 0;
    while (d < varying.size() && ++digit[d] == same[varying[d]].size()) digit[d++] = 0;
    if (d == varying.size()) break;
  }
  TF_CHECK(static_cast<int64_t>(out.size()) <= kMaxEquivalent);  // MostEquivalent's bound
  return out;
}

int64_t ConfigSpace::CanonicalIndex(int64_t index) const {
  const std::vector<int64_t> same = EquivalentIndices(index);
  return *std::min_element(same.begin(), same.end());
}

std::string ConfigSpace::Describe() const {
  std::string out;
  for (size_t k = 0; k < table_->knobs.size(); ++k) {
    const Knob& knob = *table_->knobs[k];
    absl::StrAppend(&out, "  ", k, " ", knob.name, ": ", knob.description, " size=", knob.size,
                    "\n");
  }
  return out;
}

}  // namespace tunefleet
