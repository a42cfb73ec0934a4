// Convolution taps that only ever read padding, dropped when a model loads
// (after shape completion, before task extraction, so the tuner and the
// compiler see the same convolution): a dilated convolution's outer rows
// or columns of taps whose every read falls in the zero padding for every
// output position contribute nothing. DeepLabV3's atrous pyramid on a
// 14 x 14 map (3 x 3 taps, dilations 24 and 36, pads as large) is then a
// 1 x 1 convolution of its centre taps: the kernel no longer pads its input
// to 86 x 86 and multiplies zeros.
//
// A Conv with constant float weights [K, C/g, R, S], a known 4-D input and
// output (shape inference's) and explicit pads (auto_pad NOTSET) whose
// live taps along an axis are a range [r0, r1] narrower than the kernel
// gets the weights of that range (a new constant "<node>.live_taps"), pads
// shrunk by the dropped taps' reach (pads never go below zero: otherwise it
// stays) and, with one tap left per axis, dilation 1. The output is the
// same floats.
//
//   DropDeadConvTaps(&graph);
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_DEAD_CONV_TAPS_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_DEAD_CONV_TAPS_H_

#include "tuner_core/graph/graph.h"

namespace tunefleet {

// The number of convolutions it narrowed.
int DropDeadConvTaps(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_DEAD_CONV_TAPS_H_
