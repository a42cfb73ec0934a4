// The product of tensor dimensions that cannot wrap: a crafted shape whose
// product overflows int64 (or holds a negative dimension) reads as the
// largest int64, never as a small count a caller would then allocate.
//
//   const int64_t elements = SaturatingProduct(shape);  // compare with a cap
#ifndef TUNEFLEET_COMMON_SATURATING_PRODUCT_H_
#define TUNEFLEET_COMMON_SATURATING_PRODUCT_H_

#include <cstdint>
#include <limits>

#include "absl/types/span.h"

namespace tunefleet {

inline int64_t SaturatingProduct(absl::Span<const int64_t> factors) {
  int64_t product = 1;
  for (const int64_t factor : factors) {
    if (factor < 0 || __builtin_mul_overflow(product, factor, &product)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return product;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SATURATING_PRODUCT_H_
