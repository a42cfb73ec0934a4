// The simple tiled dense template of AutoTVM's matmul tutorial: split the
// rows (tile_y) and columns (tile_x) of C, order the loops
// (yo, xo, k, yi, xi). Serial and scalar: a baseline, ~20 GFLOPS at best.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DenseTiledTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_
