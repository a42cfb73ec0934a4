// The median of a few timings, as the reports and benchmarks quote them.
//
//   const double ms = Median({3.1, 2.9, 3.4});  // 3.1
#ifndef TUNEFLEET_COMMON_MEDIAN_H_
#define TUNEFLEET_COMMON_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace tunefleet {

// The median of `values` (the mean of the middle two of an even count); 0
// when empty.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_MEDIAN_H_
