#include "tuner_core/selective/similarity.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

namespace tunefleet {
namespace {

bool SameKnobs(const ConfigSpace& a, const ConfigSpace& b) {
  if (a.num_knobs() != b.num_knobs()) return false;
  for (int i = 0; i < a.num_knobs(); ++i) {
    if (a.knob_name(i) != b.knob_name(i) || a.knob_kind(i) != b.knob_kind(i)) return false;
  }
  return true;
}

// |A_k|, |B_k| and |A_k n B_k| per knob.
struct KnobOverlap {
  double a = 0, b = 0, both = 0;
};

std::vector<KnobOverlap> Overlaps(const ConfigSpace& a, const ConfigSpace& b) {
  const std::vector<std::vector<nlohmann::json>> ca = KnobCandidates(a);
  const std::vector<std::vector<nlohmann::json>> cb = KnobCandidates(b);
  std::vector<KnobOverlap> overlaps;
  for (size_t k = 0; k < ca.size(); ++k) {
    std::set<std::string> values_a;
    for (const nlohmann::json& v : ca[k]) values_a.insert(v.dump());
    KnobOverlap o{static_cast<double>(ca[k].size()), static_cast<double>(cb[k].size()), 0};
    for (const nlohmann::json& v : cb[k]) o.both += values_a.count(v.dump());
    overlaps.push_back(o);
  }
  return overlaps;
}

}  // namespace

std::vector<std::vector<nlohmann::json>> KnobCandidates(const ConfigSpace& space) {
  std::vector<std::vector<nlohmann::json>> candidates(space.num_knobs());
  // Mixed radix, the first knob varying fastest: choice c of knob k alone is
  // the index c * (product of the sizes of the knobs before k).
  int64_t stride = 1;
  for (int k = 0; k < space.num_knobs(); ++k) {
    for (int64_t c = 0; c < space.knob_size(k); ++c) {
      absl::StatusOr<Config> config = space.Get(c * stride);
      if (!config.ok()) break;  // cannot happen for c < knob_size
      candidates[k].push_back(config->ToJson()["entity"][k][2]);
    }
    stride *= space.knob_size(k);
  }
  return candidates;
}

double SpaceSimilarity(const ConfigSpace& a, const ConfigSpace& b) {
  if (!SameKnobs(a, b)) return 0;
  double size_a = 1, size_b = 1, both = 1;
  for (const KnobOverlap& o : Overlaps(a, b)) {
    size_a *= o.a;
    size_b *= o.b;
    both *= o.both;
  }
  const double either = size_a + size_b - both;
  return either > 0 ? both / either : 0;
}

double KnobwiseSimilarity(const ConfigSpace& a, const ConfigSpace& b) {
  if (!SameKnobs(a, b)) return 0;
  double product = 1;
  for (const KnobOverlap& o : Overlaps(a, b)) {
    const double either = o.a + o.b - o.both;
    product *= either > 0 ? o.both / either : 0;
  }
  return product;
}

[[nodiscard]] absl::StatusOr<Config> MapConfig(const Config& from, const ConfigSpace& to) {
  nlohmann::json json = from.ToJson();
  json.erase("index");  // recomputed in `to`
  return to.FromJson(json);
}

namespace {

// How far apart two entity values are: 0 when equal; log ratios for
// integers and for lists of integers of one length (a split's -1 outer
// size matches anything); 1e9 for values of different shapes.
double ValueDistance(const nlohmann::json& a, const nlohmann::json& b) {
  if (a == b) return 0;
  if (a.is_number_integer() && b.is_number_integer()) {
    const double x = static_cast<double>(a.get<int64_t>());
    const double y = static_cast<double>(b.get<int64_t>());
    if (x <= 0 || y <= 0) return std::abs(x - y);
    return std::abs(std::log2(x / y));
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    double total = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_number_integer() && b[i].is_number_integer() &&
          (a[i].get<int64_t>() == -1 || b[i].get<int64_t>() == -1)) {
        continue;
      }
      total += ValueDistance(a[i], b[i]);
    }
    return total;
  }
  return a.type() == b.type() ? 1 : 1e9;
}

}  // namespace

Config MapConfigNearest(const Config& from, const ConfigSpace& to) {
  return MapConfigJsonNearest(from.ToJson(), to);
}

Config MapConfigJsonNearest(const nlohmann::json& from, const ConfigSpace& to) {
  std::map<std::string, nlohmann::json> values;
  auto entities = from.is_object() ? from.find("entity") : from.end();
  if (entities != from.end() && entities->is_array()) {
    for (const nlohmann::json& item : *entities) {
      if (item.is_array() && item.size() == 3 && item[0].is_string()) {
        values[item[0].get<std::string>()] = item[2];
      }
    }
  }
  const std::vector<std::vector<nlohmann::json>> candidates = KnobCandidates(to);
  int64_t index = 0;
  int64_t stride = 1;
  for (int k = 0; k < to.num_knobs(); ++k) {
    int64_t best = 0;
    auto it = values.find(to.knob_name(k));
    if (it != values.end()) {
      double best_distance = std::numeric_limits<double>::infinity();
      for (size_t c = 0; c < candidates[k].size(); ++c) {
        const double d = ValueDistance(it->second, candidates[k][c]);
        if (d < best_distance) {
          best_distance = d;
          best = static_cast<int64_t>(c);
        }
      }
    }
    index += best * stride;
    stride *= to.knob_size(k);
  }
  return *to.Get(index);  // every digit is below its knob's size
}

}  // namespace tunefleet
