// Internal to the config_space library: the order in which CPython (3.7 and
// later) iterates a set of small positive integers. AutoTVM's "verbose" split
// policy enumerates its candidate factors as
//   list(set(get_factors(n)) | set(get_pow2s(n)))
// without sorting, so that order decides the config indices of every verbose
// split; for n = 48 it is [32, 1, 2, 3, 4, 6, 8, 12, 16, 48, 24]. Emulating
// CPython's hash table here keeps our indices equal to AutoTVM's.
#ifndef TUNEFLEET_TUNER_CORE_SPACE_PYTHON_SET_ORDER_H_
#define TUNEFLEET_TUNER_CORE_SPACE_PYTHON_SET_ORDER_H_

#include <cstdint>
#include <vector>

namespace tunefleet {
namespace config_space_internal {

// The elements of Python's `list(set(first) | set(second))`, in the order
// CPython lists them. Every value must be in [1, 2^61 - 2], where a Python
// int hashes to itself (true of any loop extent's factors).
std::vector<int64_t> PythonSetUnionOrder(const std::vector<int64_t>& first,
                                         const std::vector<int64_t>& second);

}  // namespace config_space_internal
}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_SPACE_PYTHON_SET_ORDER_H_
