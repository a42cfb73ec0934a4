#include "tuner_core/space/config_space.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace config_space_internal {

// One knob and the full, ordered list of its choices. Exactly one of the
// choice lists is filled, according to `kind` (and `is_string` for "ot").
struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kOther;
  std::string description;  // for ConfigSpace::Describe()
  int64_t size = 0;

  bool is_string = false;                                // kOther only
  std::vector<int64_t> ints;                             // kOther, int candidates
  std::vector<std::string> strings;                      // kOther, string candidates
  std::vector<std::vector<int64_t>> splits;              // kSplit: sizes, outer first
  std::vector<std::vector<int>> orders;                  // kReorder
  std::vector<std::vector<std::string>> annotations;     // kAnnotate
};

struct KnobTable {
  std::vector<std::shared_ptr<const Knob>> knobs;
  absl::flat_hash_map<std::string, int> index_by_name;
  int64_t size = 1;  // product of the knob sizes
};

}  // namespace config_space_internal

namespace {

using config_space_internal::Knob;
using config_space_internal::KnobTable;

// Bounds that keep a single knob's materialized choice list reasonable. They
// are far above anything a sensible template asks for.
constexpr int64_t kMaxSplitChoices = int64_t{1} << 20;
constexpr int kMaxSplitOutputs = 16;
constexpr int kMaxReorderAllAxes = 8;  // 8! = 40320 orders
constexpr int kMaxAnnotateAxes = 16;

const std::shared_ptr<const KnobTable>& EmptyTable() {
  static const auto* const table =
      new std::shared_ptr<const KnobTable>(std::make_shared<KnobTable>());
  return *table;
}

const char* KindWord(KnobKind kind) {
  switch (kind) {
    case KnobKind::kOther: return "other";
    case KnobKind::kSplit: return "split";
    case KnobKind::kReorder: return "reorder";
    case KnobKind::kAnnotate: return "annotate";
  }
  return "other";
}

// Python's repr of a string, which is what AutoTVM's printout shows.
std::string PyRepr(const std::string& s) { return absl::StrCat("'", s, "'"); }

std::string PyList(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// All positive divisors of n, ascending.
std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// 1, 2, 4, ... up to n, ascending.
std::vector<int64_t> PowersOfTwo(int64_t n) {
  std::vector<int64_t> powers;
  for (int64_t p = 1; p <= n; p *= 2) {
    powers.push_back(p);
    if (p > n / 2) break;  // the next doubling would pass n (or overflow)
  }
  return powers;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Enumerates split choices in AutoTVM's order: the innermost size varies
// slowest, and within one position sizes ascend. Each choice is the full list
// of loop sizes, outer first, with the real outer extent.
class SplitEnumerator {
 public:
  SplitEnumerator(int64_t extent, int num_outputs, bool exact, std::vector<int64_t> candidates,
                  const std::function<bool(const std::vector<int64_t>&)>& filter)
      : extent_(extent),
        exact_(exact),
        candidates_(std::move(candidates)),
        filter_(filter),
        inner_(num_outputs - 1) {}

  // False when the number of choices passed kMaxSplitChoices.
  bool Run() { return Visit(0, 1); }
  std::vector<std::vector<int64_t>> TakeChoices() { return std::move(choices_); }

 private:
  // Picks inner_[depth] (inner_[0] is the innermost loop's size) given the
  // product of the sizes picked so far.
  bool Visit(size_t depth, int64_t product) {
    if (depth == inner_.size()) {
      std::vector<int64_t> sizes;
      sizes.reserve(inner_.size() + 1);
      sizes.push_back(CeilDiv(extent_, product));
      sizes.insert(sizes.end(), inner_.rbegin(), inner_.rend());
      if (filter_ && !filter_(sizes)) return true;
      choices_.push_back(std::move(sizes));
      return static_cast<int64_t>(choices_.size()) <= kMaxSplitChoices;
    }
    for (int64_t candidate : candidates_) {
      if (candidate > extent_ / product) break;  // candidates ascend
      const int64_t next = product * candidate;
      // With "factors" the product of inner sizes must divide the extent; a
      // partial product that does not divide it never will.
      if (exact_ && extent_ % next != 0) continue;
      inner_[depth] = candidate;
      if (!Visit(depth + 1, next)) return false;
    }
    return true;
  }

  const int64_t extent_;
  const bool exact_;
  const std::vector<int64_t> candidates_;
  const std::function<bool(const std::vector<int64_t>&)>& filter_;
  std::vector<int64_t> inner_;
  std::vector<std::vector<int64_t>> choices_;
};

absl::Status CheckName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("knob name must not be empty");
  return absl::OkStatus();
}

// The JSON value of one choice, as AutoTVM writes it (split outer = -1).
nlohmann::json ChoiceJson(const Knob& knob, int64_t choice) {
  switch (knob.kind) {
    case KnobKind::kOther:
      if (knob.is_string) return knob.strings[choice];
      return knob.ints[choice];
    case KnobKind::kSplit: {
      std::vector<int64_t> sizes = knob.splits[choice];
      sizes[0] = -1;
      return sizes;
    }
    case KnobKind::kReorder:
      return knob.orders[choice];
    case KnobKind::kAnnotate:
      return knob.annotations[choice];
  }
  return nullptr;
}

// The Python-style printout of one choice.
std::string ChoiceString(const Knob& knob, int64_t choice) {
  switch (knob.kind) {
    case KnobKind::kOther:
      if (knob.is_string) return PyRepr(knob.strings[choice]);
      return absl::StrCat(knob.ints[choice]);
    case KnobKind::kSplit: {
      const std::vector<int64_t>& sizes = knob.splits[choice];
      return absl::StrCat("[-1", sizes.size() > 1 ? ", " : "",
                          absl::StrJoin(sizes.begin() + 1, sizes.end(), ", "), "]");
    }
    case KnobKind::kReorder:
      return absl::StrCat("[", absl::StrJoin(knob.orders[choice], ", "), "]");
    case KnobKind::kAnnotate: {
      std::vector<std::string> quoted;
      for (const std::string& a : knob.annotations[choice]) quoted.push_back(PyRepr(a));
      return PyList(quoted);
    }
  }
  return "";
}

// Reads a JSON array of integers; false if `value` is anything else.
bool ReadIntArray(const nlohmann::json& value, std::vector<int64_t>* out) {
  if (!value.is_array()) return false;
  out->clear();
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer()) return false;
    out->push_back(item.get<int64_t>());
  }
  return true;
}

bool ReadStringArray(const nlohmann::json& value, std::vector<std::string>* out) {
  if (!value.is_array()) return false;
  out->clear();
  for (const nlohmann::json& item : value) {
    if (!item.is_string()) return false;
    out->push_back(item.get<std::string>());
  }
  return true;
}

template <typename T>
int64_t FindChoice(const std::vector<T>& choices, const T& value) {
  auto it = std::find(choices.begin(), choices.end(), value);
  return it == choices.end() ? -1 : static_cast<int64_t>(it - choices.begin());
}

// Maps an entity's JSON value to the knob's choice index.
absl::StatusOr<int64_t> MatchChoice(const Knob& knob, const nlohmann::json& value) {
  int64_t choice = -1;
  bool well_typed = true;
  switch (knob.kind) {
    case KnobKind::kOther:
      if (knob.is_string) {
        well_typed = value.is_string();
        if (well_typed) choice = FindChoice(knob.strings, value.get<std::string>());
      } else {
        well_typed = value.is_number_integer();
        if (well_typed) choice = FindChoice(knob.ints, value.get<int64_t>());
      }
      break;
    case KnobKind::kSplit: {
      std::vector<int64_t> sizes;
      well_typed = ReadIntArray(value, &sizes) && !sizes.empty();
      if (!well_typed) break;
      // AutoTVM stores the outer size as -1; accept the real size as well.
      for (size_t c = 0; c < knob.splits.size(); ++c) {
        const std::vector<int64_t>& candidate = knob.splits[c];
        if (candidate.size() == sizes.size() &&
            std::equal(candidate.begin() + 1, candidate.end(), sizes.begin() + 1) &&
            (sizes[0] == -1 || sizes[0] == candidate[0])) {
          choice = static_cast<int64_t>(c);
          break;
        }
      }
      break;
    }
    case KnobKind::kReorder: {
      std::vector<int64_t> order64;
      well_typed = ReadIntArray(value, &order64);
      if (well_typed) {
        std::vector<int> order(order64.begin(), order64.end());
        // Values that do not fit an int cannot be a permutation index anyway.
        for (int64_t v : order64) {
          if (v < 0 || v > std::numeric_limits<int>::max()) order.clear();
        }
        if (order.size() == order64.size()) choice = FindChoice(knob.orders, order);
      }
      break;
    }
    case KnobKind::kAnnotate: {
      std::vector<std::string> annotation;
      well_typed = ReadStringArray(value, &annotation);
      if (well_typed) choice = FindChoice(knob.annotations, annotation);
      break;
    }
  }
  if (!well_typed) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob.name, "': value ", value.dump(),
                                                   " has the wrong type for a ",
                                                   KindWord(knob.kind), " knob"));
  }
  if (choice < 0) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob.name, "': value ", value.dump(),
                                                   " is not one of its ", knob.size,
                                                   " choices (", knob.description, ")"));
  }
  return choice;
}

// Finds a knob by name and checks its kind, for the Config::Get* accessors.
absl::StatusOr<std::pair<const Knob*, int>> LookUpKnob(const KnobTable& table,
                                                       const std::string& name, KnobKind kind) {
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

const char* KnobKindTag(KnobKind kind) {
  switch (kind) {
    case KnobKind::kOther: return "ot";
    case KnobKind::kSplit: return "sp";
    case KnobKind::kReorder: return "re";
    case KnobKind::kAnnotate: return "an";
  }
  return "ot";
}

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

nlohmann::json Config::ToJson() const {
  nlohmann::json entity = nlohmann::json::array();
  for (size_t k = 0; k < table().knobs.size(); ++k) {
    const Knob& knob = *table().knobs[k];
    entity.push_back(
        nlohmann::json::array({knob.name, KnobKindTag(knob.kind), ChoiceJson(knob, choices_[k])}));
  }
  return nlohmann::json{{"index", index_}, {"code_hash", nullptr}, {"entity", std::move(entity)}};
}

std::string Config::ToString() const {
  std::vector<std::string> items;
  for (size_t k = 0; k < table().knobs.size(); ++k) {
    const Knob& knob = *table().knobs[k];
    items.push_back(absl::StrCat("(", PyRepr(knob.name), ", ", ChoiceString(knob, choices_[k]), ")"));
  }
  return PyList(items);
}

// ---------------------------------------------------------------- ConfigSpace

ConfigSpace::ConfigSpace() : table_(EmptyTable()) {}

absl::Status ConfigSpace::AddKnob(std::shared_ptr<const Knob> knob) {
  TF_RETURN_IF_ERROR(CheckName(knob->name));
  if (table_->index_by_name.contains(knob->name)) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", knob->name, "' is already defined"));
  }
  TF_CHECK(knob->size >= 1);
  if (table_->size > std::numeric_limits<int64_t>::max() / knob->size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "knob '", knob->name, "' (", knob->size, " choices) makes the space larger than 2^63 (",
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
  if (candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", name, "' has no candidates"));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    // A repeated value would make two indices print and parse as one config.
    if (FindChoice(candidates, candidates[i]) != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "' lists candidate ", candidates[i], " twice"));
    }
  }
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kOther;
  knob->size = static_cast<int64_t>(candidates.size());
  knob->description = absl::StrCat("other([", absl::StrJoin(candidates, ", "), "])");
  knob->ints = std::move(candidates);
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineKnob(const std::string& name, std::vector<std::string> candidates) {
  if (candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", name, "' has no candidates"));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (FindChoice(candidates, candidates[i]) != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "' lists candidate '", candidates[i], "' twice"));
    }
  }
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kOther;
  knob->is_string = true;
  knob->size = static_cast<int64_t>(candidates.size());
  std::vector<std::string> quoted;
  for (const std::string& c : candidates) quoted.push_back(PyRepr(c));
  knob->description = absl::StrCat("other(", PyList(quoted), ")");
  knob->strings = std::move(candidates);
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineSplit(const std::string& name, int64_t extent,
                                      const SplitOptions& options) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (extent < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("split '", name, "': extent must be >= 1, got ", extent));
  }
  if (options.num_outputs < 2 || options.num_outputs > kMaxSplitOutputs) {
    return absl::InvalidArgumentError(absl::StrCat("split '", name, "': num_outputs must be in [2, ",
                                                   kMaxSplitOutputs, "], got ",
                                                   options.num_outputs));
  }
  if (options.max_factor < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split '", name, "': max_factor must be >= 0 (0 = no limit), got ", options.max_factor));
  }
  std::vector<int64_t> candidates;
  if (options.policy == "factors") {
    candidates = Divisors(extent);
  } else if (options.policy == "power2") {
    candidates = PowersOfTwo(extent);
  } else if (options.policy == "verbose") {
    candidates = Divisors(extent);
    for (int64_t p : PowersOfTwo(extent)) candidates.push_back(p);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  } else {
    return absl::InvalidArgumentError(absl::StrCat("split '", name, "': unknown policy '",
                                                   options.policy,
                                                   "' (expected factors, power2 or verbose)"));
  }
  if (options.max_factor > 0) {
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](int64_t c) { return c > options.max_factor; }),
                     candidates.end());
  }

  SplitEnumerator enumerator(extent, options.num_outputs, options.policy == "factors",
                             std::move(candidates), options.filter);
  if (!enumerator.Run()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split '", name, "' has more than ", kMaxSplitChoices,
        " choices; lower num_outputs or set max_factor or a filter"));
  }
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kSplit;
  knob->splits = enumerator.TakeChoices();
  if (knob->splits.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("split '", name, "' has no choices left after max_factor and filter"));
  }
  knob->size = static_cast<int64_t>(knob->splits.size());
  knob->description = absl::StrCat("split(policy=", options.policy, ", extent=", extent,
                                   ", num_outputs=", options.num_outputs,
                                   options.max_factor > 0 ? absl::StrCat(", max_factor=",
                                                                         options.max_factor)
                                                          : "",
                                   options.filter ? ", filtered" : "", ")");
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineReorder(const std::string& name, int num_axes,
                                        const std::string& policy,
                                        std::vector<std::vector<int>> candidates) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (num_axes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("reorder '", name, "': num_axes must be >= 1, got ", num_axes));
  }
  if (policy != "candidate" && !candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reorder '", name, "': candidates are only taken with policy 'candidate'"));
  }
  std::vector<int> identity(num_axes);
  std::iota(identity.begin(), identity.end(), 0);

  std::vector<std::vector<int>> orders;
  if (policy == "identity") {
    orders.push_back(identity);
  } else if (policy == "all") {
    if (num_axes > kMaxReorderAllAxes) {
      return absl::InvalidArgumentError(
          absl::StrCat("reorder '", name, "': policy 'all' takes at most ", kMaxReorderAllAxes,
                       " axes, got ", num_axes, "; list candidates instead"));
    }
    // Lexicographic, like itertools.permutations.
    std::vector<int> order = identity;
    do {
      orders.push_back(order);
    } while (std::next_permutation(order.begin(), order.end()));
  } else if (policy == "candidate") {
    if (candidates.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reorder '", name, "': policy 'candidate' needs at least one candidate"));
    }
    for (const std::vector<int>& order : candidates) {
      std::vector<int> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != identity) {
        return absl::InvalidArgumentError(
            absl::StrCat("reorder '", name, "': candidate [", absl::StrJoin(order, ", "),
                         "] is not a permutation of 0..", num_axes - 1));
      }
      if (FindChoice(orders, order) >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "reorder '", name, "': candidate [", absl::StrJoin(order, ", "), "] is listed twice"));
      }
      orders.push_back(order);
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("reorder '", name, "': unknown policy '", policy,
                                                   "' (expected identity, all or candidate)"));
  }
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kReorder;
  knob->size = static_cast<int64_t>(orders.size());
  knob->orders = std::move(orders);
  knob->description = absl::StrCat("reorder(policy=", policy, ", num_axes=", num_axes, ")");
  return AddKnob(std::move(knob));
}

absl::Status ConfigSpace::DefineAnnotate(const std::string& name, int num_axes,
                                         const std::string& policy) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (num_axes < 1 || num_axes > kMaxAnnotateAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotate '", name, "': num_axes must be in [1, ", kMaxAnnotateAxes, "], got ", num_axes));
  }
  // Options per axis; the last axis is the innermost loop.
  std::vector<std::vector<std::string>> options(num_axes);
  if (policy == "try_unroll") {
    for (auto& o : options) o = {"none", "unroll"};
  } else if (policy == "try_vec") {
    for (auto& o : options) o = {"none"};
    options.back() = {"none", "vec"};
  } else if (policy == "try_unroll_vec") {
    for (auto& o : options) o = {"none", "unroll"};
    options.back() = {"none", "unroll", "vec"};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate '", name, "': unknown policy '", policy,
                     "' (expected try_unroll, try_vec or try_unroll_vec)"));
  }
  int64_t count = 1;
  for (const auto& o : options) count *= static_cast<int64_t>(o.size());

  // AutoTVM's order: the first axis varies slowest.
  std::vector<std::vector<std::string>> annotations;
  annotations.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    std::vector<std::string> annotation(num_axes);
    int64_t rest = i;
    for (int axis = num_axes - 1; axis >= 0; --axis) {
      const int64_t n = static_cast<int64_t>(options[axis].size());
      annotation[axis] = options[axis][rest % n];
      rest /= n;
    }
    annotations.push_back(std::move(annotation));
  }
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kAnnotate;
  knob->size = count;
  knob->annotations = std::move(annotations);
  knob->description = absl::StrCat("annotate(policy=", policy, ", num_axes=", num_axes, ")");
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

absl::StatusOr<Config> ConfigSpace::FromJson(const nlohmann::json& config_json) const {
  if (!config_json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config JSON must be an object, got ", config_json.type_name()));
  }
  auto entity_it = config_json.find("entity");
  if (entity_it == config_json.end() || !entity_it->is_array()) {
    return absl::InvalidArgumentError("config JSON has no \"entity\" array");
  }
  const size_t num_knobs = table_->knobs.size();
  std::vector<int64_t> choices(num_knobs, -1);
  for (const nlohmann::json& item : *entity_it) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_string() || !item[1].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config entity item ", item.dump(), " is not [name, kind, value]"));
    }
    const std::string name = item[0].get<std::string>();
    const std::string tag = item[1].get<std::string>();
    auto found = table_->index_by_name.find(name);
    if (found == table_->index_by_name.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config names knob '", name, "', which this space does not define"));
    }
    const Knob& knob = *table_->knobs[found->second];
    if (tag != KnobKindTag(knob.kind)) {
      return absl::InvalidArgumentError(absl::StrCat("knob '", name, "': kind '", tag,
                                                     "' but the space defines it as '",
                                                     KnobKindTag(knob.kind), "' (",
                                                     KindWord(knob.kind), ")"));
    }
    if (choices[found->second] >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "' appears twice in the config"));
    }
    TF_ASSIGN_OR_RETURN(choices[found->second], MatchChoice(knob, item[2]));
  }
  int64_t index = 0;
  int64_t stride = 1;
  for (size_t k = 0; k < num_knobs; ++k) {
    if (choices[k] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", table_->knobs[k]->name, "' is missing from the config"));
    }
    index += choices[k] * stride;
    stride *= table_->knobs[k]->size;
  }
  auto index_it = config_json.find("index");
  if (index_it != config_json.end() && !index_it->is_null()) {
    if (!index_it->is_number_integer() || index_it->get<int64_t>() != index) {
      return absl::InvalidArgumentError(absl::StrCat("config index ", index_it->dump(),
                                                     " disagrees with its entity, which is index ",
                                                     index, " of this space"));
    }
  }
  return Config(table_, index, std::move(choices));
}

absl::StatusOr<Config> ConfigSpace::FromJsonString(const std::string& text) const {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config JSON does not parse: ", e.what()));
  }
  return FromJson(parsed);
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
