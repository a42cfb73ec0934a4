#include "tuner_core/space/knob_choices.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "tuner_core/space/python_set_order.h"

namespace tunefleet {
namespace config_space_internal {
namespace {

// Bounds that keep a single knob's materialized choice list reasonable. They
// are far above anything a sensible template asks for.
constexpr int64_t kMaxSplitChoices = int64_t{1} << 20;
constexpr int kMaxSplitOutputs = 16;
constexpr int kMaxReorderAllAxes = 8;  // 8! = 40320 orders
constexpr int kMaxAnnotateAxes = 16;
constexpr int64_t kMaxAnnotateChoices = int64_t{1} << 17;

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

// Enumerates split choices in AutoTVM's order (SplitSpace._generate_space): a
// depth-first walk where the innermost size varies slowest and each position
// takes the candidates in the order given. Each choice is the full list of
// loop sizes, outer first, with the real outer extent. Skipping subtrees that
// can hold no choice keeps AutoTVM's order.
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
      // Candidates need not ascend ("verbose" lists them in Python set order).
      if (candidate > extent_ / product) continue;
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

// InvalidArgument for an empty list, or a repeated value (which would make
// two indices print and parse as one config); `print` shows a candidate.
template <typename T, typename Print>
[[nodiscard]] absl::Status CheckCandidates(const std::string& name,
                                           const std::vector<T>& candidates, Print print) {
  if (candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("knob '", name, "' has no candidates"));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (FindChoice(candidates, candidates[i]) != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "' lists candidate ", print(candidates[i]), " twice"));
    }
  }
  return absl::OkStatus();
}

// The per-axis options of an AutoTVM annotate policy such as "try_vec" or
// "try_unroll_vec": the policy with "try" read as "none", split at '_'.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> AnnotateOptions(const std::string& name,
                                                                       const std::string& policy) {
  std::vector<std::string> options =
      absl::StrSplit(absl::StrReplaceAll(policy, {{"try", "none"}}), '_');
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& option = options[i];
    if (option != "none" && option != "unroll" && option != "vec") {
      return absl::InvalidArgumentError(absl::StrCat(
          "annotate '", name, "': unknown policy '", policy,
          "' (expected words none|try, unroll, vec joined by '_', e.g. try_unroll_vec)"));
    }
    if (FindChoice(options, option) != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("annotate '", name, "': policy '", policy, "' offers '", option, "' twice"));
    }
  }
  return options;
}

// Enumerates annotations like AnnotateSpace._generate_space: depth first, the
// first axis varying slowest, keeping those that vectorize at most one axis.
class AnnotateEnumerator {
 public:
  AnnotateEnumerator(int num_axes, std::vector<std::string> options)
      : options_(std::move(options)), current_(num_axes) {}

  // False when the number of choices passed kMaxAnnotateChoices.
  bool Run() { return Visit(0, false); }
  std::vector<std::vector<std::string>> TakeChoices() { return std::move(choices_); }

 private:
  bool Visit(size_t axis, bool vectorized) {
    if (axis == current_.size()) {
      choices_.push_back(current_);
      return static_cast<int64_t>(choices_.size()) <= kMaxAnnotateChoices;
    }
    for (const std::string& option : options_) {
      const bool vec = option == "vec";
      if (vec && vectorized) continue;  // a second "vec" is never a choice
      current_[axis] = option;
      if (!Visit(axis + 1, vectorized || vec)) return false;
    }
    return true;
  }

  const std::vector<std::string> options_;
  std::vector<std::string> current_;
  std::vector<std::vector<std::string>> choices_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeIntKnob(
    const std::string& name, std::vector<int64_t> candidates) {
  TF_RETURN_IF_ERROR(CheckCandidates(name, candidates, [](int64_t c) { return absl::StrCat(c); }));
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kOther;
  knob->size = static_cast<int64_t>(candidates.size());
  knob->description = absl::StrCat("other([", absl::StrJoin(candidates, ", "), "])");
  knob->ints = std::move(candidates);
  return std::shared_ptr<const Knob>(std::move(knob));
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeStringKnob(
    const std::string& name, std::vector<std::string> candidates) {
  TF_RETURN_IF_ERROR(CheckCandidates(name, candidates, PyRepr));
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kOther;
  knob->is_string = true;
  knob->size = static_cast<int64_t>(candidates.size());
  std::vector<std::string> quoted;
  for (const std::string& c : candidates) quoted.push_back(PyRepr(c));
  knob->description = absl::StrCat("other(", PyList(quoted), ")");
  knob->strings = std::move(candidates);
  return std::shared_ptr<const Knob>(std::move(knob));
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeSplitKnob(
    const std::string& name, int64_t extent, const SplitOptions& options) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (extent < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("split '", name, "': extent must be >= 1, got ", extent));
  }
  if (options.num_outputs < 2 || options.num_outputs > kMaxSplitOutputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("split '", name, "': num_outputs must be in [2, ", kMaxSplitOutputs, "], got ",
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
    // AutoTVM takes list(set(factors) | set(powers of two)) unsorted, so its
    // indices follow CPython's set order (e.g. 32 comes first for 48).
    candidates = PythonSetUnionOrder(Divisors(extent), PowersOfTwo(extent));
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
    return absl::InvalidArgumentError(
        absl::StrCat("split '", name, "' has more than ", kMaxSplitChoices,
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
  knob->description = absl::StrCat(
      "split(policy=", options.policy, ", extent=", extent, ", num_outputs=", options.num_outputs,
      options.max_factor > 0 ? absl::StrCat(", max_factor=", options.max_factor) : "",
      options.filter ? ", filtered" : "", ")");
  return std::shared_ptr<const Knob>(std::move(knob));
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeReorderKnob(
    const std::string& name, int num_axes, const std::string& policy,
    std::vector<std::vector<int>> candidates) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (num_axes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("reorder '", name, "': num_axes must be >= 1, got ", num_axes));
  }
  if (policy != "candidate" && !candidates.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reorder '", name, "': candidates are only taken with policy 'candidate'"));
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
  return std::shared_ptr<const Knob>(std::move(knob));
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const Knob>> MakeAnnotateKnob(
    const std::string& name, int num_axes, const std::string& policy) {
  TF_RETURN_IF_ERROR(CheckName(name));
  if (num_axes < 1 || num_axes > kMaxAnnotateAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotate '", name, "': num_axes must be in [1, ", kMaxAnnotateAxes, "], got ", num_axes));
  }
  // AutoTVM's AnnotateSpace: "try" reads as "none", and every axis takes
  // the same options in the policy's order ("try_unroll_vec": none, unroll,
  // vec); a choice vectorizes at most one axis, any one.
  TF_ASSIGN_OR_RETURN(std::vector<std::string> options, AnnotateOptions(name, policy));
  AnnotateEnumerator enumerator(num_axes, std::move(options));
  if (!enumerator.Run()) {
    return absl::InvalidArgumentError(
        absl::StrCat("annotate '", name, "': policy '", policy, "' on ", num_axes,
                     " axes has more than ", kMaxAnnotateChoices, " choices; use fewer axes"));
  }
  std::vector<std::vector<std::string>> annotations = enumerator.TakeChoices();
  if (annotations.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("annotate '", name, "': policy '", policy,
                                                   "' has no choice for ", num_axes,
                                                   " axes (at most one axis may be vectorized)"));
  }
  const int64_t count = static_cast<int64_t>(annotations.size());
  auto knob = std::make_shared<Knob>();
  knob->name = name;
  knob->kind = KnobKind::kAnnotate;
  knob->size = count;
  knob->annotations = std::move(annotations);
  knob->description = absl::StrCat("annotate(policy=", policy, ", num_axes=", num_axes, ")");
  return std::shared_ptr<const Knob>(std::move(knob));
}

}  // namespace config_space_internal
}  // namespace tunefleet
