#include "toolchain/default_config.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tuner_core/templates/conv2d_nchwc_x86.h"
#include "tuner_core/templates/group_conv2d_nchwc_x86.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/register_fit.h"
#include "tuner_core/workloads/conv_workload.h"

namespace tunefleet {
namespace {

// A dense layer of at most this many rows gets the dot kernel by default.
constexpr int64_t kDotMaxRows = 4;

// The register tile a convolution gets with no measurement to go by, by
// the target's vector registers: with 32 (AVX-512, NEON) one vector of
// output channels by about 8 columns; with 16 (AVX2) two vectors by about
// 6, 12 accumulators, so each weight vector loaded feeds 6 FMAs and each
// broadcast input 2 (one vector by 8 leaves half the registers idle and
// loads a weight vector per 8 FMAs). What tuning on both kinds of x86
// found best most often (tuner_core/pretuned/data: 2-vector blocks by 4-6
// columns in 179 of AVX2's 343 convolution tasks, 1 by 6-8 in 132 of
// AVX-512's).
struct ConvTileGoal {
  int oc_vectors = 1;
  int columns = 8;
  std::string reduce;  // the "reduce" value, where the template has one
};
ConvTileGoal ConvTileGoalFor(int vector_registers, DefaultTile tile) {
  if (tile == DefaultTile::kTarget && vector_registers > 0 && vector_registers <= 16) {
    return {2, 6};
  }
  return {1, 8};
}

// The order of a GEMM's parallel tasks ("fuse"): "mn" walks N within each
// block of A's rows, so that block stays cached and B is read once per
// block of rows; "nm" walks M within each panel of B's columns, so the
// panel stays cached and A is read once per panel. An operand that fits in
// a core's L2 (512 KiB assumed, Zen 1-3's; larger elsewhere) is read once
// either way; the order that moves fewer bytes wins, "mn" on a tie. Blocks
// as the default tile cuts them (6 rows, panels of two vectors). ViT-B's
// 197x3072x768 layer on a Zen 1 at 2 threads: 45 GFLOPS walking N (B, 9 MiB,
// read 33 times), 70 walking M (A, 0.6 MiB, read 192 times from L3); where
// both orders read little again (128x256x1024) they measure alike.
std::string GemmTaskOrder(const nlohmann::json& args, int lanes) {
  constexpr double kCacheBytes = 512 * 1024;
  const double m = args.value("M", 0.0), n = args.value("N", 0.0), k = args.value("K", 0.0);
  const double a = 4 * m * k, b = 4 * n * k;
  const double row_blocks = std::ceil(m / 6), column_panels = std::ceil(n / (2.0 * lanes));
  const double walk_n = a + (b > kCacheBytes ? row_blocks * b : b);
  const double walk_m = b + (a > kCacheBytes ? column_panels * a : a);
  return walk_m < walk_n ? "nm" : "mn";
}

// How well a config suits a target with no measurement to go by: vectors
// as wide as the target's, channel blocks of about that width (output
// channel blocks as ConvTileGoalFor says), register tiles of about 8
// columns, 6 with 16 registers (the widest tile the knob cuts the output's
// rows into, ConvTileWidth); for dense, the dot kernel for a few rows
// (B, the weights, read in place: nothing packed per call), else B packed
// once, at compile time, its tasks in the order GemmTaskOrder says. Other
// knobs keep their first choice. A sum of per-knob terms, so the best
// config is each knob's best choice.
double DefaultScore(const Config& config, int lanes, const ConvTileGoal& goal,
                    const Workload& workload) {
  double score = 0;
  const nlohmann::json entity = config.ToJson().value("entity", nlohmann::json::array());
  // The workload's canonical args: every default (e.g. dense's layout) filled in.
  const nlohmann::json& args = workload.args();
  const auto* conv = dynamic_cast<const ConvWorkload*>(&workload);
  const int64_t rows = args.value("M", int64_t{0});
  const bool dot = rows > 0 && rows <= kDotMaxRows && args.value("layout", "") == "NK";
  const std::string task_order = rows > 0 ? GemmTaskOrder(args, lanes) : "";
  for (const nlohmann::json& knob : entity) {
    if (knob.size() < 3) continue;
    const std::string name = knob[0].get<std::string>();
    if (knob[2].is_string()) {
      const std::string v = knob[2].get<std::string>();
      if (name == "kernel" && (v == "dot") != dot) score -= 1000;
      if (name == "pack_b" && v != "once") score -= 1000;
      if (name == "fuse" && rows > 0 && v != task_order) score -= 1;
      if (name == "reduce" && v != goal.reduce) score -= 1;
      continue;
    }
    if (!knob[2].is_number_integer()) continue;
    const double v = knob[2].get<double>();
    if (v <= 0) continue;
    if (name == "vec") score -= 100 * std::abs(std::log2(v) - std::log2(lanes));
    if (name == "tile_c") score -= 10 * std::abs(std::log2(v) - std::log2(lanes));
    // Input blocks are scored as output blocks are, so that a layer reads
    // the block the layer before it writes by default (no relayout between).
    if (name == "tile_oc" || name == "tile_ic") {
      score -= 10 * std::abs(std::log2(v) - std::log2(lanes * goal.oc_vectors));
    }
    // Output-channel blocks are the vectors: a block of 29 is a full
    // vector and one of 13 lanes (16 + 13 of 32 lanes used), one of 4 a
    // quarter of one; the lanes left idle cost as much again.
    if (name == "tile_oc" || name == "tile_ic" || name == "tile_c") {
      score -= 30 * (1 - v / (std::ceil(v / lanes) * lanes));
    }
    if (name == "tile_ow") {
      const int64_t width = conv != nullptr
                                ? ConvTileWidth(conv->conv_args(), static_cast<int64_t>(v))
                                : static_cast<int64_t>(v);
      score -= std::abs(static_cast<double>(width) - goal.columns);
    }
    if (rows > 0 && name == "mr") score -= dot ? 10 * std::abs(v - rows) : std::abs(v - 6);
    if (rows > 0 && name == "nr_vecs") score -= std::abs(v - (dot ? 4 : 2));
    if (rows > 0 && name == "unroll_k") score -= std::abs(std::log2(v) - 1);
    if (rows > 0 && name == "kc") score -= std::abs(std::log2(v) - 8);
  }
  return score;
}

// Each knob's best choice under DefaultScore (first choice on a tie).
[[nodiscard]] absl::StatusOr<Config> BestPerKnob(const ConfigSpace& space, int lanes,
                                                 const ConvTileGoal& goal,
                                                 const Workload& workload) {
  int64_t index = 0, stride = 1;  // the first knob is the least significant digit
  for (int i = 0; i < space.num_knobs(); ++i) {
    int64_t best = 0;
    double best_score = -INFINITY;
    for (int64_t c = 0; c < space.knob_size(i); ++c) {
      TF_ASSIGN_OR_RETURN(Config config, space.Get(c * stride));
      const double score = DefaultScore(config, lanes, goal, workload);
      if (score > best_score) {
        best_score = score;
        best = c;
      }
    }
    index += best * stride;
    stride *= space.knob_size(i);
  }
  return space.Get(index);
}

// A config the builder would build for `target`: the template instantiates
// it and its register tile fits the target's vector registers (a tile that
// does not fit spills in the inner loop; tuner_core/templates/register_fit.h).
bool Buildable(const Task& task, const Config& config, const TargetSpec& target) {
  return task.tmpl().Instantiate(task.workload(), config).ok() &&
         CheckRegisterTileFits(task.tmpl(), task.workload(), config, target).ok();
}

}  // namespace

int TargetVectorLanes(const TargetSpec& target) { return std::max(1, target.vector_bits / 32); }

bool DefaultTilesDiffer(const TargetSpec& target) {
  const ConvTileGoal wide = ConvTileGoalFor(target.vector_registers, DefaultTile::kTarget);
  const ConvTileGoal narrow = ConvTileGoalFor(target.vector_registers, DefaultTile::kOneVector);
  return wide.oc_vectors != narrow.oc_vectors || wide.columns != narrow.columns;
}

[[nodiscard]] absl::StatusOr<Config> DefaultConfig(const Task& task, int lanes, DefaultTile tile) {
  const ConfigSpace& space = task.space();
  TF_ASSIGN_OR_RETURN(TargetSpec target, ParseTarget(task.target()));
  ConvTileGoal goal = ConvTileGoalFor(target.vector_registers, tile);
  if (const auto* conv = dynamic_cast<const ConvWorkload*>(&task.workload())) {
    // Winograd where it pays, a pointwise convolution's input shared by
    // groups of output-channel blocks (Conv2dNchwcDefaultReduce); blocks of
    // whole groups wider than a broadcast tile.
    goal.reduce = Conv2dNchwcDefaultReduce(conv->conv_args());
    if (&task.tmpl() == &GroupConv2dNchwcX86Template()) {
      goal.reduce = kGroupConv2dNchwcDefaultReduce;
      if (goal.oc_vectors == 1) goal.columns = kGroupConv2dNchwcDefaultColumns;
    }
  }
  TF_ASSIGN_OR_RETURN(Config best, BestPerKnob(space, lanes, goal, task.workload()));
  if (Buildable(task, best, target)) return best;
  const int64_t size = space.size();
  const int64_t step = std::max<int64_t>(1, size / 20000);
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t i = 0; i < size; i += step) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(i));
    ranked.push_back({-DefaultScore(config, lanes, goal, task.workload()), i});
  }
  std::stable_sort(ranked.begin(), ranked.end());
  // The best-scored config the builder would build for the target. The
  // register check is cheap and rules out most (channel counts such as 58
  // leave only narrow blocks), so every ranked config gets it; at most 256
  // that pass are instantiated.
  int instantiated = 0;
  for (size_t i = 0; i < ranked.size() && instantiated < 256; ++i) {
    TF_ASSIGN_OR_RETURN(Config config, space.Get(ranked[i].second));
    if (!CheckRegisterTileFits(task.tmpl(), task.workload(), config, target).ok()) continue;
    ++instantiated;
    if (task.tmpl().Instantiate(task.workload(), config).ok()) return config;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "template ", task.name(), " found no default config for ", task.workload().Describe()));
}

}  // namespace tunefleet
