// Config <-> AutoTVM JSON and the Python-style printout: Config::ToJson,
// Config::ToString, ConfigSpace::FromJson and FromJsonString.
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/space/knob.h"

namespace tunefleet {
namespace {

using config_space_internal::FindChoice;
using config_space_internal::KindWord;
using config_space_internal::Knob;
using config_space_internal::PyList;
using config_space_internal::PyRepr;

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

// Maps an entity's JSON value to the knob's choice index.
[[nodiscard]] absl::StatusOr<int64_t> MatchChoice(const Knob& knob, const nlohmann::json& value) {
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
                                                   " is not one of its ", knob.size, " choices (",
                                                   knob.description, ")"));
  }
  return choice;
}

}  // namespace

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
    items.push_back(
        absl::StrCat("(", PyRepr(knob.name), ", ", ChoiceString(knob, choices_[k]), ")"));
  }
  return PyList(items);
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
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", name, "': kind '", tag, "' but the space defines it as '",
                       KnobKindTag(knob.kind), "' (", KindWord(knob.kind), ")"));
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
    if (choices[k] < 0 && table_->knobs[k]->absent_is_first) choices[k] = 0;
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

}  // namespace tunefleet
