// Reading and writing float32 tensors as NumPy .npy files (format 1.0,
// little-endian '<f4', C order; int64 and int32 ones are read too) or raw
// float files, for `tunefleet run` and the tests that compare compiled
// models with a reference.
#ifndef TUNEFLEET_COMPILER_NPY_H_
#define TUNEFLEET_COMPILER_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {

struct FloatTensor {
  std::vector<int64_t> shape;  // empty for a raw file
  std::vector<float> data;
  std::vector<int64_t> ints;  // an int64/int32 .npy file's values (data then empty)
};

// A .npy file (by its magic) or else raw little-endian floats. A .npy of
// int64 or int32 (token ids) fills `ints`. InvalidArgument naming the file
// for another dtype, a Fortran-order array or a shape that is not the
// file's element count.
[[nodiscard]] absl::StatusOr<FloatTensor> ReadTensorFile(const std::string& path);
// Writes `tensor` as a C-order .npy: float32, or int64 when it holds only
// `ints`. Internal naming the path when it cannot be written.
[[nodiscard]] absl::Status WriteNpy(const std::string& path, const FloatTensor& tensor);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_NPY_H_
