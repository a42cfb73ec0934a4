// Small helpers shared by the search strategies (SA, GA, the model-based
// tuner): config indices as mixed-radix points (one digit per knob, the
// first knob varying fastest, as ConfigSpace numbers them), and portable
// seeded draws (hand-written so a seed replays the same run with any
// standard library; <random>'s distributions differ between them).
#ifndef TUNEFLEET_TUNER_CORE_TUNERS_SEARCH_UTIL_H_
#define TUNEFLEET_TUNER_CORE_TUNERS_SEARCH_UTIL_H_

#include <cstdint>
#include <random>
#include <vector>

namespace tunefleet {

// Per-knob choice indices of `index` in a space with knob sizes `dims`.
inline std::vector<int64_t> IndexToPoint(int64_t index, const std::vector<int64_t>& dims) {
  std::vector<int64_t> point(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    point[i] = index % dims[i];
    index /= dims[i];
  }
  return point;
}

inline int64_t PointToIndex(const std::vector<int64_t>& point, const std::vector<int64_t>& dims) {
  int64_t index = 0;
  for (size_t i = dims.size(); i-- > 0;) index = index * dims[i] + point[i];
  return index;
}

// Uniform in [0, bound), bound > 0, unbiased.
inline uint64_t UniformBelow(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const uint64_t r = engine();
    if (r >= threshold) return r % bound;
  }
}

// Uniform in [0, 1).
inline double UniformUnit(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TUNERS_SEARCH_UTIL_H_
