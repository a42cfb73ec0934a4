// Config spaces: the tunable knobs of a kernel template, and the configs that
// pick one choice per knob. Same meaning and JSON shape as AutoTVM's
// ConfigSpace / ConfigEntity, so records and indices carry over.
//
// A template defines its knobs once, in a fixed order, then reads the choices
// of whatever config it is asked to build:
//
//   ConfigSpace space;
//   TF_RETURN_IF_ERROR(space.DefineSplit("tile_y", 1024));          // [-1, y]
//   TF_RETURN_IF_ERROR(space.DefineKnob("unroll_k", {0, 1}));
//   TF_ASSIGN_OR_RETURN(Config config, space.Get(17));
//   TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_y, config.GetSplit("tile_y"));
//
// Knob kinds and their choices:
//   "ot"  DefineKnob: an explicit list of ints or strings.
//   "sp"  DefineSplit: ways to split one loop of `extent` into `num_outputs`
//         nested loops; a choice is the list of loop sizes, outermost first.
//         Policies: "factors" (inner sizes whose product divides the extent),
//         "power2" (inner sizes are powers of two, outer = ceil-div), and
//         "verbose" (inner sizes from factors and powers of two together).
//   "re"  DefineReorder: loop orders, each a permutation of 0..num_axes-1.
//   "an"  DefineAnnotate: one of "none" | "unroll" | "vec" per axis, at most
//         one axis vectorized.
//
// A config's index is mixed radix over the knobs in definition order, with the
// FIRST-defined knob varying fastest (AutoTVM's convention). Within a knob,
// choices are listed in AutoTVM's order too, so an AutoTVM index of the same
// space names the same config here:
//   split     depth first over the candidate inner sizes, the innermost loop's
//             size varying slowest; candidates ascend for "factors" and
//             "power2", and for "verbose" come in the order AutoTVM's
//             list(set(factors) | set(powers of two)) has in CPython (for 48:
//             32, 1, 2, 3, 4, 6, 8, 12, 16, 48, 24), not sorted;
//   reorder   "all" lexicographic, like itertools.permutations;
//   annotate  depth first, the first axis varying slowest, options in the
//             policy's order ("try_unroll_vec": none, unroll, vec).
//
// ConfigSpace is cheap to copy: its knob table is immutable and shared. Config
// values share it too, so they stay valid after the space is moved, copied or
// destroyed, and after more knobs are defined (a definition makes a new table).
#ifndef TUNEFLEET_TUNER_CORE_SPACE_CONFIG_SPACE_H_
#define TUNEFLEET_TUNER_CORE_SPACE_CONFIG_SPACE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

enum class KnobKind {
  kOther,     // "ot"
  kSplit,     // "sp"
  kReorder,   // "re"
  kAnnotate,  // "an"
};

// The two-letter tag of a kind in config JSON: "ot", "sp", "re" or "an".
const char* KnobKindTag(KnobKind kind);

struct SplitOptions {
  std::string policy = "factors";  // factors | power2 | verbose
  int num_outputs = 2;             // number of nested loops (>= 2)
  int64_t max_factor = 0;          // largest inner size allowed; 0 = no limit
  // Keeps a choice when it returns true. Receives the full sizes, outer first,
  // with the real (ceil-div) outer extent. Empty = keep everything.
  std::function<bool(const std::vector<int64_t>&)> filter;
};

namespace config_space_internal {
struct Knob;       // defined in config_space.cc
struct KnobTable;  // defined in config_space.cc
}  // namespace config_space_internal

class ConfigSpace;

// One point of a config space: a choice for each knob. A value type.
class Config {
 public:
  // An empty config (of a space with no knobs), index 0.
  Config();

  int64_t index() const { return index_; }
  // Per-knob choice index, in definition order (the mixed-radix digits).
  std::vector<int64_t> choice_indices() const { return choices_; }

  // The choice of one knob. NotFound for an unknown name, InvalidArgument
  // when the knob is of another kind (or an "ot" knob of the other type).
  [[nodiscard]] absl::StatusOr<int64_t> GetInt(const std::string& name) const;
  [[nodiscard]] absl::StatusOr<std::string> GetString(const std::string& name) const;
  // Loop sizes, outer first; the outer size is the real (ceil-div) extent,
  // not the -1 that JSON stores.
  [[nodiscard]] absl::StatusOr<std::vector<int64_t>> GetSplit(const std::string& name) const;
  [[nodiscard]] absl::StatusOr<std::vector<int>> GetReorder(const std::string& name) const;
  // "none" | "unroll" | "vec" per axis.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> GetAnnotate(const std::string& name) const;

  // {"index": i, "code_hash": null, "entity": [[name, "sp", [-1, 4]], ...]},
  // AutoTVM's ConfigEntity.to_json_dict(); split outer sizes written as -1.
  nlohmann::json ToJson() const;
  // "[('tile_y', [-1, 4]), ('mr', 6)]", like AutoTVM's printout.
  std::string ToString() const;

 private:
  friend class ConfigSpace;
  Config(std::shared_ptr<const config_space_internal::KnobTable> table, int64_t index,
         std::vector<int64_t> choices);
  // The knob table; an empty one for a moved-from config.
  const config_space_internal::KnobTable& table() const;

  std::shared_ptr<const config_space_internal::KnobTable> table_;
  int64_t index_ = 0;
  std::vector<int64_t> choices_;
};

class ConfigSpace {
 public:
  ConfigSpace();
  // Copies share the immutable knob table. There are deliberately no move
  // operations: a "moved-from" space stays a valid copy of the original.
  ConfigSpace(const ConfigSpace&) = default;
  ConfigSpace& operator=(const ConfigSpace&) = default;

  // Each Define* appends one knob. InvalidArgument (naming the knob) for a
  // duplicate name, no candidates, bad parameters, or a space whose size would
  // overflow int64; the space is unchanged then.
  [[nodiscard]] absl::Status DefineKnob(const std::string& name, std::vector<int64_t> candidates);
  [[nodiscard]] absl::Status DefineKnob(const std::string& name,
                                        std::vector<std::string> candidates);
  // A knob added to a template after records of its space were written: as
  // DefineKnob, but a config JSON that omits it (a record from before the
  // knob existed) reads as its first choice, which must therefore be what
  // the template did without the knob. Such knobs come after every other
  // one (an ordinary knob after one is InvalidArgument), so that the first
  // choice leaves old records' indices unchanged.
  [[nodiscard]] absl::Status DefineAddedKnob(const std::string& name,
                                             std::vector<int64_t> candidates);
  // Let braced lists pick the right overload: DefineKnob("mr", {4, 6, 8}),
  // DefineKnob("layout", {"NK", "KN"}) (both vector overloads alone would be
  // ambiguous for a list of string literals).
  [[nodiscard]] absl::Status DefineKnob(const std::string& name,
                                        std::initializer_list<int64_t> candidates) {
    return DefineKnob(name, std::vector<int64_t>(candidates));
  }
  [[nodiscard]] absl::Status DefineKnob(const std::string& name,
                                        std::initializer_list<std::string> candidates) {
    return DefineKnob(name, std::vector<std::string>(candidates));
  }
  [[nodiscard]] absl::Status DefineSplit(const std::string& name, int64_t extent,
                                         const SplitOptions& options = {});
  // policy: "identity" (one choice), "all" (every permutation, num_axes <= 8)
  // or "candidate" (exactly `candidates`, each a permutation of 0..num_axes-1).
  [[nodiscard]] absl::Status DefineReorder(const std::string& name, int num_axes,
                                           const std::string& policy,
                                           std::vector<std::vector<int>> candidates = {});
  // AutoTVM's annotate policies: words joined by '_', "try" meaning "none",
  // each of none|unroll|vec at most once; every axis may take every word the
  // policy lists, and a choice vectorizes at most one axis (any one, as in
  // AutoTVM's AnnotateSpace). So "try_unroll": each axis none|unroll (2^n
  // choices); "try_vec": all none, or exactly one axis vec (n + 1);
  // "try_unroll_vec": none|unroll everywhere with at most one vec
  // (2^n + n * 2^(n-1)); "try_vec_unroll" the same choices in another order.
  // num_axes <= 16 and at most 2^17 choices.
  [[nodiscard]] absl::Status DefineAnnotate(const std::string& name, int num_axes,
                                            const std::string& policy);

  // Declares that while knob `when` has the value `value` (one of its string
  // candidates), the knobs `inert` do not change what the template builds
  // (it ignores them): configs that differ only in those knobs are one
  // kernel, and a search measures one of them (EquivalentIndices). All
  // knobs must be defined already; InvalidArgument naming the unknown knob
  // or value, for rules that chain (`when` inert under another rule, or an
  // inert knob another rule's condition), or when the inert knobs of all
  // rules have more than kMaxEquivalent combinations. Records of any of the
  // equivalent configs stay valid.
  [[nodiscard]] absl::Status DeclareInert(const std::string& when, const std::string& value,
                                          const std::vector<std::string>& inert);
  static constexpr int64_t kMaxEquivalent = 1 << 16;
  // Declares which choices of knob `name` build the same kernel, all other
  // knobs alike: choices i and j do when kernel_of[i] == kernel_of[j] (one
  // label per choice, e.g. the tile a row-tile width really cuts). A search
  // measures one of them (EquivalentIndices), and records of any stay
  // valid. InvalidArgument for an unknown knob, a label count other than the
  // knob's size, a knob that is an inert rule's condition, a second
  // declaration for the knob, or more than kMaxEquivalent equivalent
  // configs with the inert rules.
  [[nodiscard]] absl::Status DeclareSameKernelChoices(const std::string& name,
                                                      const std::vector<int64_t>& kernel_of);
  // The indices of the configs that build the same kernel as `index`'s (by
  // the DeclareInert and DeclareSameKernelChoices rules), `index` first;
  // just {index} when no rule applies. `index` must be inside the space.
  std::vector<int64_t> EquivalentIndices(int64_t index) const;
  // The smallest of EquivalentIndices(index): one name for the kernel.
  int64_t CanonicalIndex(int64_t index) const;

  // Number of configs: the product of the knob sizes (1 with no knobs).
  int64_t size() const;
  int num_knobs() const;
  // Knob i in definition order; i must be in [0, num_knobs()).
  const std::string& knob_name(int i) const;
  KnobKind knob_kind(int i) const;
  int64_t knob_size(int i) const;
  // Number of choices of each knob, in definition order.
  std::vector<int64_t> KnobDims() const;

  // The config with this index; OutOfRange outside [0, size()).
  [[nodiscard]] absl::StatusOr<Config> Get(int64_t index) const;
  // Parses AutoTVM config JSON and checks every entity against this space:
  // each knob exactly once, with its kind and one of its choices. The index is
  // recomputed from the entity; an "index" in the JSON must agree with it.
  // InvalidArgument naming what is wrong.
  [[nodiscard]] absl::StatusOr<Config> FromJson(const nlohmann::json& config_json) const;
  // Same, from text; a JSON parse error is InvalidArgument.
  [[nodiscard]] absl::StatusOr<Config> FromJsonString(const std::string& text) const;

  // One line per knob: "  0 tile_y: split(policy=factors, extent=32, num_outputs=2) size=6".
  std::string Describe() const;

 private:
  // Checks the name and the new size, then installs a new table with `knob`
  // appended (configs made earlier keep the old table).
  [[nodiscard]] absl::Status AddKnob(std::shared_ptr<const config_space_internal::Knob> knob);

  std::shared_ptr<const config_space_internal::KnobTable> table_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SPACE_CONFIG_SPACE_H_
