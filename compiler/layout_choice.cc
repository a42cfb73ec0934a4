#include "compiler/layout_choice.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "compiler/kernel_packing.h"
#include "compiler/lower_model.h"
#include "toolchain/codegen/target.h"
#include "toolchain/default_config.h"

namespace tunefleet {
namespace {

// option_record's entry for a default layer's one-vector default.
constexpr int kOneVectorDefault = -1;

// The seconds layer `layer` adds with option `o`, the others as `chosen`.
double LocalSeconds(int layer, int o, const std::vector<std::vector<LayoutOption>>& options,
                    const std::vector<std::vector<const LayoutEdge*>>& edges_of,
                    const std::vector<int>& chosen) {
  double seconds = options[layer][o].seconds;
  for (const LayoutEdge* e : edges_of[layer]) {
    const LayoutOption& a = options[e->from][e->from == layer ? o : chosen[e->from]];
    const LayoutOption& b = options[e->to][e->to == layer ? o : chosen[e->to]];
    seconds += RelayoutSeconds(*e, a, b);
  }
  return seconds;
}

// Steps whose output takes their (first) input's layout: relayouts (their
// output has the layout the reader wants, so the source is what feeds
// them), elementwise steps, batch norms, channel gathers, concatenations
// (their anchor's block, ConcatAnchor) and, keeping only the channel
// block, pooling.
bool KeepsLayout(StepOp op) {
  return op == StepOp::kRelayout || op == StepOp::kAdd || op == StepOp::kPointwise ||
         op == StepOp::kChannelBinary || op == StepOp::kBatchNorm || op == StepOp::kChannelGather ||
         op == StepOp::kConcat || op == StepOp::kMaxPool || op == StepOp::kAvgPool;
}

// Where `buffer`'s layout comes from, seen through the steps that keep it:
// the kernel step that wrote it (`step`), or else the buffer written by the
// step that fixed its layout (`buffer`, step -1: a graph input, a softmax,
// a tensor operator, ...). `pooled`: pooling on the way, so only the
// channel block carries over (its rows are the pooled image's).
struct LayoutSource {
  int step = -1;
  int buffer = -1;
  bool pooled = false;
};

// The input of a concat step whose producer wrote the concat's layout (the
// others were relaid into it: tensor_op_lowering.h ConcatBlock), the
// earliest such; -1 where every input was relaid.
int ConcatAnchor(const ModelPlan& plan, const std::vector<int>& writer, const PlanStep& concat) {
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    const int w = writer[concat.inputs[i]];
    if (w < 0 || plan.steps[w].op != StepOp::kRelayout) return static_cast<int>(i);
  }
  return -1;
}

LayoutSource SourceOf(const ModelPlan& plan, const std::vector<int>& writer, int buffer) {
  LayoutSource source;
  for (int hops = 0; buffer >= 0 && hops < 64; ++hops) {
    source.buffer = buffer;
    if (writer[buffer] < 0) break;
    const PlanStep& step = plan.steps[writer[buffer]];
    if (step.op == StepOp::kKernel) {
      source.step = writer[buffer];
      break;
    }
    if (!KeepsLayout(step.op) || step.inputs.empty()) break;
    source.pooled |= step.op == StepOp::kMaxPool || step.op == StepOp::kAvgPool;
    const int input = step.op == StepOp::kConcat ? ConcatAnchor(plan, writer, step) : 0;
    if (input < 0) break;
    buffer = step.inputs[input];
  }
  return source;
}

int64_t Elements(const PlanBuffer& buffer) {
  int64_t n = 1;
  for (int64_t d : buffer.shape) n *= d;
  return n;
}

LayoutOption OptionOfStep(const ModelPlan& plan, const PlanStep& step, double seconds) {
  const PlanBuffer& in = plan.buffers[step.inputs[0]];
  const PlanBuffer& out = plan.buffers[step.outputs[0]];
  return {in.block, in.RowWidth(), out.block, out.RowWidth(), seconds};
}

}  // namespace

bool UsableCandidateCost(double cost, double best_cost) {
  return std::isfinite(cost) && std::isfinite(best_cost) && cost > 0 && best_cost > 0 &&
         cost <= best_cost * kMaxSlowdown;
}

double RelayoutSeconds(const LayoutEdge& edge, const LayoutOption& a, const LayoutOption& b) {
  const int64_t block = edge.residual ? b.write_block : b.read_block;
  const int64_t row = edge.residual ? b.write_row : b.read_row;
  const bool rows_fit = edge.block_only || a.write_row == row;
  if (a.write_block == block && rows_fit) return 0;
  if (!edge.residual && rows_fit && b.related_reads.Takes(b.read_block, a.write_block)) return 0;
  return 2.0 * sizeof(float) * static_cast<double>(edge.elements) / kRelayoutBytesPerSecond;
}

std::vector<int> ChooseLayoutOptions(const std::vector<std::vector<LayoutOption>>& options,
                                     const std::vector<LayoutEdge>& edges) {
  std::vector<std::vector<const LayoutEdge*>> edges_of(options.size());
  for (const LayoutEdge& e : edges) {
    edges_of[e.from].push_back(&e);
    if (e.to != e.from) edges_of[e.to].push_back(&e);
  }
  auto descend = [&](std::vector<int> chosen) {
    // Each move lowers the total strictly, so this ends; the bound is a backstop.
    for (int round = 0; round < 32; ++round) {
      bool moved = false;
      for (size_t layer = 0; layer < options.size(); ++layer) {
        const int l = static_cast<int>(layer);
        double best = LocalSeconds(l, chosen[l], options, edges_of, chosen);
        for (int o = 0; o < static_cast<int>(options[l].size()); ++o) {
          const double seconds = LocalSeconds(l, o, options, edges_of, chosen);
          if (seconds < best * (1 - 1e-9)) {
            best = seconds;
            chosen[l] = o;
            moved = true;
          }
        }
      }
      if (!moved) break;
    }
    return chosen;
  };
  auto total = [&](const std::vector<int>& chosen) {
    double seconds = 0;
    for (size_t l = 0; l < options.size(); ++l) seconds += options[l][chosen[l]].seconds;
    for (const LayoutEdge& e : edges) {
      seconds += RelayoutSeconds(e, options[e.from][chosen[e.from]], options[e.to][chosen[e.to]]);
    }
    return seconds;
  };
  // From every layer's best; then, since one layer at a time cannot move a
  // chain that must change block together (ShuffleNet's branches, joined
  // by concats, all in one block), also from every layer in one block
  // where it can be (its fastest option reading and writing it).
  std::vector<int> best = descend(std::vector<int>(options.size(), 0));
  double best_total = total(best);
  std::set<int64_t> blocks;
  for (const auto& layer : options) {
    for (const LayoutOption& o : layer) blocks.insert(o.write_block);
  }
  for (int64_t block : blocks) {
    std::vector<int> start(options.size(), 0);
    for (size_t l = 0; l < options.size(); ++l) {
      for (int o = 0; o < static_cast<int>(options[l].size()); ++o) {
        const LayoutOption& option = options[l][o];
        const LayoutOption& now = options[l][start[l]];
        const bool fits = option.write_block == block && option.read_block == block;
        const bool now_fits = now.write_block == block && now.read_block == block;
        if (fits && (!now_fits || option.seconds < now.seconds)) start[l] = o;
      }
    }
    std::vector<int> chosen = descend(start);
    const double seconds = total(chosen);
    if (seconds < best_total * (1 - 1e-9)) {
      best = std::move(chosen);
      best_total = seconds;
    }
  }
  return best;
}

[[nodiscard]] absl::StatusOr<LayoutChoice> ChooseLayouts(const Graph& graph,
                                                         const std::vector<ModelLayer>& layers,
                                                         const RecordSelection& records,
                                                         const std::string& target, int lanes) {
  LayoutChoice result;
  TF_ASSIGN_OR_RETURN(const TargetSpec spec, ParseTarget(target));
  const bool default_alternatives = DefaultTilesDiffer(spec);
  bool any_choice = false;
  for (const ModelLayer& layer : layers) {
    const size_t candidates = CandidateRecords(layer, records).size();
    any_choice |= candidates > 1 || (candidates == 0 && default_alternatives);
  }
  if (!any_choice) return result;
  std::map<std::string, const ModelLayer*> layer_by_node;
  for (const ModelLayer& layer : layers) layer_by_node[layer.name] = &layer;
  ChooseKernelFn best = [&](const ModelLayer& layer) {
    return ChooseKernel(layer, records, target, lanes);
  };
  LowerOptions lower;
  lower.alias_concats = false;
  TF_ASSIGN_OR_RETURN(BuiltPlan built, LowerModel(graph, layers, best, lower));
  const ModelPlan& plan = built.plan;

  // Nodes of the plan's tuned kernels, their options and the candidate
  // record each option is.
  std::vector<int> writer(plan.buffers.size(), -1);
  std::map<int, int> node_of_step;
  std::vector<const ModelLayer*> nodes;
  std::vector<std::vector<LayoutOption>> options;
  std::vector<std::vector<int>> option_record;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    for (int out : step.outputs) writer[out] = static_cast<int>(i);
    auto layer = layer_by_node.find(step.node);
    if (step.op != StepOp::kKernel || step.inputs.empty() || step.outputs.empty() ||
        layer == layer_by_node.end()) {
      continue;
    }
    node_of_step[static_cast<int>(i)] = static_cast<int>(nodes.size());
    nodes.push_back(layer->second);
    const auto& candidates = CandidateRecords(*layer->second, records);
    const double best_cost = candidates.empty()
                                 ? ModelLayerFlops(layer->second->workload, layer->second->args) /
                                       (lanes * kDefaultFlopsPerLaneSecond)
                                 : candidates[0].first.ReportedCost();
    options.push_back({OptionOfStep(plan, step, best_cost)});
    option_record.push_back({0});
    // A blocked kernel's own block: the plan may have it read its
    // producer's as it is (emit_plan.h), which the edges then price.
    if (absl::StatusOr<KernelChoice> chosen = best(*layer->second); chosen.ok()) {
      absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(*chosen);
      if (blocked.ok() && blocked->has_value()) {
        options.back()[0].read_block = (*blocked)->in_block;
        options.back()[0].related_reads = RelatedBlockReadsOf(**blocked);
      }
    }
    // Only blocked convolutions have layouts to choose between (dense kernels
    // that pack B once stage weights too, but read and write plain rows).
    if (step.staged.empty() || layer->second->workload == "dense") continue;
    if (candidates.empty()) {
      if (!default_alternatives) continue;
      absl::StatusOr<KernelChoice> narrow =
          ChooseKernel(*layer->second, records, target, lanes, DefaultTile::kOneVector);
      if (!narrow.ok()) continue;
      absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(*narrow);
      if (!blocked.ok() || !blocked->has_value()) continue;
      const PlanBuffer& in = plan.buffers[step.inputs[0]];
      const LayoutOption option{(*blocked)->in_block,
                                in.shape.at(3),
                                (*blocked)->out_block,
                                (*blocked)->out_row_width,
                                best_cost * kOneVectorDefaultSlowdown,
                                RelatedBlockReadsOf(**blocked)};
      const LayoutOption& wide = options.back()[0];
      if (option.read_block == wide.read_block && option.write_block == wide.write_block &&
          option.write_row == wide.write_row) {
        continue;  // the same layouts: nothing to trade
      }
      options.back().push_back(option);
      option_record.back().push_back(kOneVectorDefault);
      continue;
    }
    for (size_t c = 1; c < candidates.size(); ++c) {
      // The best is the best (a validated record beats a lucky unvalidated
      // figure): another record may tie it, never undercut it.
      const double cost = std::max(candidates[c].first.ReportedCost(), best_cost);
      if (!UsableCandidateCost(candidates[c].first.ReportedCost(), best_cost)) continue;
      absl::StatusOr<KernelChoice> choice =
          KernelChoiceOfRecord(candidates[c].first, candidates[c].second, records.path, target);
      if (!choice.ok()) continue;
      absl::StatusOr<std::optional<BlockedConvKernel>> blocked = BlockedConvOf(*choice);
      if (!blocked.ok() || !blocked->has_value()) continue;
      const PlanBuffer& in = plan.buffers[step.inputs[0]];
      options.back().push_back({(*blocked)->in_block, in.shape.at(3), (*blocked)->out_block,
                                (*blocked)->out_row_width, cost, RelatedBlockReadsOf(**blocked)});
      option_record.back().push_back(static_cast<int>(c));
    }
  }
  // A layout no kernel sets (a graph input's, a softmax's, ...) is a node of
  // one option: what the best records' plan has there.
  auto fixed_node = [&](const PlanBuffer& buffer) {
    const int64_t row = buffer.RowWidth();
    options.push_back({LayoutOption{buffer.block, row, buffer.block, row, 0}});
    return static_cast<int>(options.size()) - 1;
  };
  // The node a source is: its kernel's, a fixed one, or -1 (a constant).
  auto node_of = [&](const LayoutSource& source) {
    auto kernel = node_of_step.find(source.step);
    if (kernel != node_of_step.end()) return kernel->second;
    if (source.buffer >= 0 && writer[source.buffer] >= 0) {
      return fixed_node(plan.buffers[source.buffer]);
    }
    return -1;
  };
  std::vector<LayoutEdge> edges;
  for (const auto& [step_index, node] : node_of_step) {
    const PlanStep& step = plan.steps[step_index];
    auto add_edge = [&](int buffer, bool residual) {
      const LayoutSource source = SourceOf(plan, writer, buffer);
      const int from = node_of(source);
      if (from >= 0) {
        edges.push_back({from, node, residual, Elements(plan.buffers[buffer]), source.pooled});
      }
    };
    add_edge(step.inputs[0], false);
    if (step.epilogue.residual >= 0) add_edge(step.epilogue.residual, true);
  }
  for (const PlanStep& step : plan.steps) {
    if (step.op == StepOp::kConcat) {
      // Each other input is copied into the anchor's layout (the concat's
      // own where every input was relaid): as a residual is into its
      // kernel's output layout.
      const int anchor = ConcatAnchor(plan, writer, step);
      const LayoutSource first = anchor >= 0 ? SourceOf(plan, writer, step.inputs[anchor])
                                             : LayoutSource{-1, step.outputs[0], false};
      int to = -2;  // the anchor's node, made once, when an edge needs it
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        if (static_cast<int>(i) == anchor) continue;
        const LayoutSource source = SourceOf(plan, writer, step.inputs[i]);
        if (!node_of_step.count(source.step) && !node_of_step.count(first.step)) continue;
        if (to == -2) to = node_of(first);
        const int from = node_of(source);
        if (from >= 0 && to >= 0) {
          edges.push_back({from, to, true, Elements(plan.buffers[step.inputs[i]]), false});
        }
      }
      continue;
    }
    if (step.op == StepOp::kKernel || KeepsLayout(step.op)) continue;
    // Any other step reads its inputs in the layout the plan gives it.
    for (int input : step.inputs) {
      const LayoutSource source = SourceOf(plan, writer, input);
      auto from = node_of_step.find(source.step);
      if (from == node_of_step.end()) continue;
      const int fixed = fixed_node(plan.buffers[input]);
      edges.push_back({from->second, fixed, false, Elements(plan.buffers[input]), source.pooled});
    }
  }
  const std::vector<int> chosen = ChooseLayoutOptions(options, edges);
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (chosen[n] == 0) continue;
    const auto& candidates = CandidateRecords(*nodes[n], records);
    const int record = option_record[n][chosen[n]];
    double before = 0, after = 0;
    for (const LayoutEdge& e : edges) {
      if (e.from != static_cast<int>(n) && e.to != static_cast<int>(n)) continue;
      before += RelayoutSeconds(e, options[e.from][0], options[e.to][0]);
      after += RelayoutSeconds(e, options[e.from][chosen[e.from]], options[e.to][chosen[e.to]]);
    }
    const LayoutOption& o = options[n][chosen[n]];
    if (record == kOneVectorDefault) {
      result.one_vector_defaults.insert(nodes[n]->name);
      result.notes.push_back(absl::StrFormat(
          "layer '%s': default config in one-vector channel blocks (reads NCHW%dc, writes "
          "NCHW%dc; est. %+.0f%% kernel time) for fewer relayouts: those at its edges est. "
          "%.3f -> %.3f ms",
          nodes[n]->name, o.read_block, o.write_block, 100 * (kOneVectorDefaultSlowdown - 1),
          before * 1e3, after * 1e3));
      continue;
    }
    result.record_index[nodes[n]->name] = record;
    result.notes.push_back(absl::StrFormat(
        "layer '%s': %s:%d (%+.1f%% kernel time over the best, %s:%d) reads NCHW%dc and writes "
        "NCHW%dc/row %d for fewer relayouts: those at its edges est. %.3f -> %.3f ms",
        nodes[n]->name, records.path, candidates[record].second,
        100 * (o.seconds / options[n][0].seconds - 1), records.path, candidates[0].second,
        o.read_block, o.write_block, o.write_row, before * 1e3, after * 1e3));
  }
  return result;
}

}  // namespace tunefleet
