// Layout-aware choice of tuned layers' configs (AutoTVM's graph tuner in
// small): a blocked convolution reads NCHW[b]c of one channel block with
// rows exactly the image's width and writes its own block and row width;
// where the best record of a layer reads another layout than its producer
// writes, the plan needs a relayout step (passes/emit_plan.h). Here each layer
// may take the fastest record of any layout its records offer
// (kernel_choice.h's candidates, within kMaxSlowdown of its best), and the choice minimises the
// recorded kernel times (a candidate counted no faster than the best, which may be a validated
// figure) plus an estimate of the relayouts left (bytes moved at kRelayoutBytesPerSecond), starting
// from the best of every layer and changing one layer at a time while the total drops (so with no
// relayout at stake every layer keeps its best record, AutoTVM's pick-best). Steps between kernels
// are seen through where they keep their input's layout (batch norms, channel gathers, pooling,
// a concatenation its first input's); where they fix one of their own (a graph input, a softmax)
// it is a node of one option, so a kernel reading or feeding one pays its relayouts too.
//
//   TF_ASSIGN_OR_RETURN(LayoutChoice chosen,
//                       ChooseLayouts(graph, layers, records, target, lanes));
//   ... chosen.record_index["conv3"] is the index into CandidateRecords.
#ifndef TUNEFLEET_COMPILER_LAYOUT_CHOICE_H_
#define TUNEFLEET_COMPILER_LAYOUT_CHOICE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/kernel_choice.h"
#include "compiler/kernel_packing.h"
#include "tuner_core/graph/graph.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

// A candidate slower than its layer's best by more than this factor is never
// taken, whatever relayout it would save (and a record of no finite,
// positive cost never).
inline constexpr double kMaxSlowdown = 1.5;
// Bytes a relayout step moves per second (read + write), one thread: a
// 192x28x28 relayout took 0.08-0.13 ms on Zen 4.
inline constexpr double kRelayoutBytesPerSecond = 10e9;

// A layer with no record runs its default config, whose seconds are
// estimated from its FLOPs at this rate per fp32 lane of the target's
// vectors (one FMA of each lane per cycle at 2 GHz: 32 GFLOPS with AVX2,
// about what one core of an AVX2 Zen reaches on ResNet-18's untuned
// convolutions). Where the target's default tile is two vectors of output
// channels (toolchain/default_config.h), the layer may also take the
// one-vector default, counted this much slower: ResNet-18 untuned ran
// 1.13-1.17x faster with two-vector tiles than with one on an AVX2 Zen.
inline constexpr double kDefaultFlopsPerLaneSecond = 4e9;
inline constexpr double kOneVectorDefaultSlowdown = 1.15;

// One way to run a layer: what it reads and writes, and its time.
struct LayoutOption {
  int64_t read_block = 1, read_row = 0;    // its input's block and row width
  int64_t write_block = 1, write_row = 0;  // its output's
  double seconds = 0;
  // Blocks related to read_block it also reads as they are (kernel_packing.h
  // RelatedBlockReads); a compiled model's kernel then reads its
  // producer's block with no relayout (emit_plan.h).
  RelatedBlockReads related_reads;
};

// Layer `to` reads the output of layer `from` as its input (in its own
// block, or a related one: related_reads), or (residual)
// adds it to its own output, whose layout it must then have (as a
// concatenation copies its later inputs into its first one's layout).
struct LayoutEdge {
  int from = 0, to = 0;
  bool residual = false;
  int64_t elements = 0;  // of the tensor, for the relayout's cost
  // Through pooling, which keeps the channel block and writes rows of its
  // own width: only the blocks must agree.
  bool block_only = false;
};

// Whether a candidate of `cost` seconds may stand in for its layer's best
// of `best_cost`: both finite and positive, cost within kMaxSlowdown.
bool UsableCandidateCost(double cost, double best_cost);

// The relayout seconds an edge costs when `from` takes option `a` and `to` option `b`.
double RelayoutSeconds(const LayoutEdge& edge, const LayoutOption& a, const LayoutOption& b);

// One option index per layer (options[i] non-empty; option 0 is the
// layer's best on its own) minimising the sum of option seconds and
// RelayoutSeconds over `edges`, by single-layer moves from all zeros and
// from every layer in one channel block where it can be (so a chain that
// must change block together can); the lowest total wins, all zeros on a tie.
std::vector<int> ChooseLayoutOptions(const std::vector<std::vector<LayoutOption>>& options,
                                     const std::vector<LayoutEdge>& edges);

struct LayoutChoice {
  // Layer (node) name -> index into CandidateRecords(layer), only for layers
  // that do not take their best record.
  std::map<std::string, int> record_index;
  // Layers with no record that take the one-vector default config
  // (DefaultTile::kOneVector) for fewer relayouts.
  std::set<std::string> one_vector_defaults;
  // Per changed layer: "layer X: r.jsonl:12 (+3.1% over the best, r.jsonl:9)
  // whose layouts match its neighbours': saves ~0.05 ms of relayouts".
  std::vector<std::string> notes;
};

// Builds the plan once with every layer's best record (and defaults where
// none) to find which layer reads which, then chooses as above.
[[nodiscard]] absl::StatusOr<LayoutChoice> ChooseLayouts(const Graph& graph,
                                                         const std::vector<ModelLayer>& layers,
                                                         const RecordSelection& records,
                                                         const std::string& target, int lanes);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_LAYOUT_CHOICE_H_
