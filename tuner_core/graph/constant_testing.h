// Constant tensors for graph tests: Floats({2, 3}, {...}), Ints({2}, {...}).
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_CONSTANT_TESTING_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_CONSTANT_TESTING_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "tuner_core/graph/graph.h"

namespace tunefleet {

inline ConstantTensor Floats(std::vector<int64_t> dims, std::vector<float> values) {
  ConstantTensor t;
  t.shape = {kOnnxFloat, std::move(dims)};
  t.f32 = std::move(values);
  return t;
}

inline ConstantTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  ConstantTensor t;
  t.shape = {kOnnxInt64, std::move(dims)};
  t.i64 = std::move(values);
  return t;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_CONSTANT_TESTING_H_
