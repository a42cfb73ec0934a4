#include "compiler/passes/fuse_patterns.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/operator_table.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// Who reads and who writes each tensor, for walking chains.
class Chains {
 public:
  explicit Chains(const Graph& graph) : graph_(graph) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const std::string& input : graph.nodes[i].inputs) readers_[input].push_back(i);
      for (const std::string& output : graph.nodes[i].outputs) writer_[output] = i;
    }
    for (const std::string& output : graph.outputs) outputs_.insert(output);
  }

  // The node that alone reads `tensor` (not a graph output), or nullopt.
  std::optional<size_t> SoleReader(const std::string& tensor) const {
    auto it = readers_.find(tensor);
    if (outputs_.count(tensor) || it == readers_.end() || it->second.size() != 1) {
      return std::nullopt;
    }
    return it->second[0];
  }
  std::optional<size_t> Writer(const std::string& tensor) const {
    auto it = writer_.find(tensor);
    if (it == writer_.end()) return std::nullopt;
    return it->second;
  }
  const std::vector<size_t>& Readers(const std::string& tensor) const {
    static const std::vector<size_t> none;
    auto it = readers_.find(tensor);
    return it == readers_.end() ? none : it->second;
  }
  bool IsOutput(const std::string& tensor) const { return outputs_.count(tensor) > 0; }

  // The scalar float constant `tensor` holds, or nullopt.
  std::optional<float> Scalar(const std::string& tensor) const {
    auto it = graph_.constants.find(tensor);
    if (it == graph_.constants.end() || it->second.shape.dtype != kOnnxFloat ||
        it->second.f32.size() != 1) {
      return std::nullopt;
    }
    return it->second.f32[0];
  }

 private:
  const Graph& graph_;
  std::map<std::string, std::vector<size_t>> readers_;
  std::map<std::string, size_t> writer_;
  std::set<std::string> outputs_;
};

bool Near(std::optional<float> value, double want) {
  return value && std::fabs(*value - want) <= 1e-4 * std::fabs(want);
}

// For a binary node with `tensor` as one input: the other input.
std::string Other(const GraphNode& node, const std::string& tensor) {
  if (node.inputs.size() != 2) return "";
  return node.inputs[0] == tensor ? node.inputs[1] : node.inputs[0];
}

// One rewrite: the nodes it removes and the node that takes the place of
// the first of them.
struct Rewrite {
  std::vector<size_t> removed;
  GraphNode replacement;
  std::map<std::string, ConstantTensor> constants;  // new ones the replacement reads
};

// GELU's last products from `p` = 1 + Erf(...) or 1 + Tanh(...): p times x
// and 0.5 in either order, or times (x * 0.5) made beforehand. The nodes go
// into `rewrite`; the GELU's output tensor, or nullopt.
std::optional<std::string> MatchHalfXTimes(const Graph& graph, const Chains& chains,
                                           const GraphNode& p, const std::string& x,
                                           Rewrite* rewrite) {
  std::optional<size_t> first = chains.SoleReader(p.outputs[0]);
  if (!first || graph.nodes[*first].op_type != "Mul") return std::nullopt;
  const GraphNode& m1 = graph.nodes[*first];
  const std::string with = Other(m1, p.outputs[0]);
  rewrite->removed.push_back(*first);
  if (with == x || Near(chains.Scalar(with), 0.5)) {
    std::optional<size_t> second = chains.SoleReader(m1.outputs[0]);
    if (!second || graph.nodes[*second].op_type != "Mul") return std::nullopt;
    const GraphNode& m2 = graph.nodes[*second];
    const std::string last = Other(m2, m1.outputs[0]);
    if (!(with == x ? Near(chains.Scalar(last), 0.5) : last == x)) return std::nullopt;
    rewrite->removed.push_back(*second);
    return m2.outputs[0];
  }
  // with = Mul(x, 0.5), read by nothing else.
  std::optional<size_t> half = chains.Writer(with);
  if (!half || !chains.SoleReader(with)) return std::nullopt;
  const GraphNode& h = graph.nodes[*half];
  if (h.op_type != "Mul" || h.inputs.size() != 2 ||
      !((h.inputs[0] == x && Near(chains.Scalar(h.inputs[1]), 0.5)) ||
        (h.inputs[1] == x && Near(chains.Scalar(h.inputs[0]), 0.5)))) {
    return std::nullopt;
  }
  rewrite->removed.push_back(*half);
  return m1.outputs[0];
}

// The node after `node` that alone reads its output: an Add of 1 (GELU's
// 1 + Erf or 1 + Tanh), or nullopt.
std::optional<size_t> OnePlus(const Graph& graph, const Chains& chains, const GraphNode& node) {
  std::optional<size_t> plus = chains.SoleReader(node.outputs[0]);
  if (!plus) return std::nullopt;
  const GraphNode& p = graph.nodes[*plus];
  if (p.op_type != "Add" || !Near(chains.Scalar(Other(p, node.outputs[0])), 1.0)) {
    return std::nullopt;
  }
  return plus;
}

// x * 0.5 * (1 + Erf(x / sqrt 2)) from its Erf node.
std::optional<Rewrite> MatchGelu(const Graph& graph, const Chains& chains, size_t erf) {
  const GraphNode& e = graph.nodes[erf];
  std::optional<size_t> scale = chains.Writer(e.inputs[0]);
  if (!scale || !chains.SoleReader(e.inputs[0])) return std::nullopt;
  const GraphNode& s = graph.nodes[*scale];
  if (s.inputs.size() != 2) return std::nullopt;
  const std::string& x = s.inputs[0];
  const bool scaled = (s.op_type == "Div" && Near(chains.Scalar(s.inputs[1]), std::sqrt(2.0))) ||
                      (s.op_type == "Mul" && Near(chains.Scalar(s.inputs[1]), std::sqrt(0.5)));
  if (!scaled) return std::nullopt;
  std::optional<size_t> plus = OnePlus(graph, chains, e);
  if (!plus) return std::nullopt;
  Rewrite rewrite;
  rewrite.removed = {*scale, erf, *plus};
  std::optional<std::string> output =
      MatchHalfXTimes(graph, chains, graph.nodes[*plus], x, &rewrite);
  if (!output) return std::nullopt;
  rewrite.replacement = {absl::StrCat(e.name, ".gelu"), "Gelu", {x}, {*output}};
  return rewrite;
}

// The Mul by a scalar near `factor` (either operand order) that writes
// `tensor` alone for its sole reader: the other operand, or nullopt.
std::optional<std::string> ScaledBy(const Graph& graph, const Chains& chains,
                                    const std::string& tensor, double factor,
                                    std::vector<size_t>* removed) {
  std::optional<size_t> writer = chains.Writer(tensor);
  if (!writer || !chains.SoleReader(tensor)) return std::nullopt;
  const GraphNode& m = graph.nodes[*writer];
  if (m.op_type != "Mul" || m.inputs.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (Near(chains.Scalar(m.inputs[i]), factor)) {
      removed->push_back(*writer);
      return m.inputs[1 - i];
    }
  }
  return std::nullopt;
}

// Whether `tensor`, read only here, is x cubed: Pow(x, 3), or x * (x * x)
// in either order (its nodes into `removed`).
bool IsCubeOf(const Graph& graph, const Chains& chains, const std::string& tensor,
              const std::string& x, std::vector<size_t>* removed) {
  std::optional<size_t> writer = chains.Writer(tensor);
  if (!writer || !chains.SoleReader(tensor)) return false;
  const GraphNode& c = graph.nodes[*writer];
  if (c.inputs.size() != 2) return false;
  if (c.op_type == "Pow") {
    if (c.inputs[0] != x || !Near(chains.Scalar(c.inputs[1]), 3.0)) return false;
    removed->push_back(*writer);
    return true;
  }
  if (c.op_type != "Mul" || (c.inputs[0] != x && c.inputs[1] != x)) return false;
  const std::string square = Other(c, x);
  std::optional<size_t> sq = chains.Writer(square);
  if (!sq || !chains.SoleReader(square)) return false;
  const GraphNode& q = graph.nodes[*sq];
  if (q.op_type != "Mul" || q.inputs.size() != 2 || q.inputs[0] != x || q.inputs[1] != x) {
    return false;
  }
  removed->push_back(*writer);
  removed->push_back(*sq);
  return true;
}

// GELU's tanh form (GPT-2's, HuggingFace's gelu_new) from its Tanh node:
// x * 0.5 * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), x^3 as Pow or
// two products, every product in either order.
std::optional<Rewrite> MatchGeluTanh(const Graph& graph, const Chains& chains, size_t tanh) {
  const GraphNode& t = graph.nodes[tanh];
  Rewrite rewrite;
  rewrite.removed = {tanh};
  std::optional<std::string> sum =
      ScaledBy(graph, chains, t.inputs[0], 0.7978845608028654, &rewrite.removed);  // sqrt(2 / pi)
  if (!sum) return std::nullopt;
  std::optional<size_t> add = chains.Writer(*sum);
  if (!add || !chains.SoleReader(*sum) || graph.nodes[*add].op_type != "Add" ||
      graph.nodes[*add].inputs.size() != 2) {
    return std::nullopt;
  }
  const GraphNode& a = graph.nodes[*add];
  rewrite.removed.push_back(*add);
  for (int i = 0; i < 2; ++i) {
    const std::string& x = a.inputs[i];
    Rewrite attempt = rewrite;
    std::optional<std::string> cube =
        ScaledBy(graph, chains, a.inputs[1 - i], 0.044715, &attempt.removed);
    if (!cube || !IsCubeOf(graph, chains, *cube, x, &attempt.removed)) continue;
    std::optional<size_t> plus = OnePlus(graph, chains, t);
    if (!plus) return std::nullopt;
    attempt.removed.push_back(*plus);
    std::optional<std::string> output =
        MatchHalfXTimes(graph, chains, graph.nodes[*plus], x, &attempt);
    if (!output) return std::nullopt;
    attempt.replacement = {absl::StrCat(t.name, ".gelu"), "Gelu", {x}, {*output}};
    attempt.replacement.attributes["approximate"] = "tanh";
    return attempt;
  }
  return std::nullopt;
}

// x * Sigmoid(x) from its Sigmoid node.
std::optional<Rewrite> MatchSilu(const Graph& graph, const Chains& chains, size_t sigmoid) {
  const GraphNode& s = graph.nodes[sigmoid];
  std::optional<size_t> mul = chains.SoleReader(s.outputs[0]);
  if (!mul || graph.nodes[*mul].op_type != "Mul") return std::nullopt;
  const GraphNode& m = graph.nodes[*mul];
  if (Other(m, s.outputs[0]) != s.inputs[0]) return std::nullopt;
  Rewrite rewrite;
  rewrite.removed = {sigmoid, *mul};
  rewrite.replacement = {absl::StrCat(s.name, ".silu"), kSiluOp, {s.inputs[0]}, {m.outputs[0]}};
  return rewrite;
}

// Whether `node` is a ReduceMean over the last axis only, keeping it.
bool IsMeanOfLastAxis(const Graph& graph, const GraphNode& node) {
  if (node.op_type != "ReduceMean" || IntAttribute(node, "keepdims", 1) == 0) return false;
  std::vector<int64_t> axes = IntsAttribute(node, "axes", {});
  if (axes.empty() && node.inputs.size() > 1) {
    auto it = graph.constants.find(node.inputs[1]);
    if (it != graph.constants.end()) axes = it->second.i64;
  }
  const int64_t rank =
      static_cast<int64_t>(graph.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims.size());
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// LayerNorm's decomposition from its first ReduceMean: the mean is read by
// the Sub alone; the difference by Pow and Div.
std::optional<Rewrite> MatchLayerNorm(const Graph& graph, const Chains& chains, size_t mean) {
  const GraphNode& m = graph.nodes[mean];
  if (!IsMeanOfLastAxis(graph, m)) return std::nullopt;
  const std::string& x = m.inputs[0];
  std::optional<size_t> sub = chains.SoleReader(m.outputs[0]);
  if (!sub) return std::nullopt;
  const GraphNode& d = graph.nodes[*sub];
  if (d.op_type != "Sub" || d.inputs.size() != 2 || d.inputs[0] != x ||
      d.inputs[1] != m.outputs[0]) {
    return std::nullopt;
  }
  const std::vector<size_t>& diff_readers = chains.Readers(d.outputs[0]);
  if (diff_readers.size() != 2 || chains.IsOutput(d.outputs[0])) return std::nullopt;
  std::optional<size_t> pow, div;
  for (size_t r : diff_readers) {
    const GraphNode& n = graph.nodes[r];
    if (n.op_type == "Pow" && n.inputs[0] == d.outputs[0] && Near(chains.Scalar(n.inputs[1]), 2)) {
      pow = r;
    } else if (n.op_type == "Mul" && n.inputs.size() == 2 && n.inputs[0] == d.outputs[0] &&
               n.inputs[1] == d.outputs[0]) {
      pow = r;
    } else if (n.op_type == "Div" && n.inputs[0] == d.outputs[0]) {
      div = r;
    }
  }
  if (!pow || !div) return std::nullopt;
  std::optional<size_t> var = chains.SoleReader(graph.nodes[*pow].outputs[0]);
  if (!var || !IsMeanOfLastAxis(graph, graph.nodes[*var])) return std::nullopt;
  std::optional<size_t> eps = chains.SoleReader(graph.nodes[*var].outputs[0]);
  if (!eps || graph.nodes[*eps].op_type != "Add") return std::nullopt;
  const std::optional<float> epsilon =
      chains.Scalar(Other(graph.nodes[*eps], graph.nodes[*var].outputs[0]));
  if (!epsilon) return std::nullopt;
  std::optional<size_t> sqrt = chains.SoleReader(graph.nodes[*eps].outputs[0]);
  if (!sqrt || graph.nodes[*sqrt].op_type != "Sqrt") return std::nullopt;
  const GraphNode& q = graph.nodes[*div];
  if (q.inputs[1] != graph.nodes[*sqrt].outputs[0] || !chains.SoleReader(q.inputs[1])) {
    return std::nullopt;
  }
  Rewrite rewrite;
  rewrite.removed = {mean, *sub, *pow, *var, *eps, *sqrt, *div};
  GraphNode norm{absl::StrCat(m.name, ".layer_norm"), "LayerNormalization", {x}, {}};
  norm.attributes["axis"] = -1;
  norm.attributes["epsilon"] = *epsilon;
  // Then, optionally, * gamma and + beta (constants of the last axis).
  std::string out = q.outputs[0];
  const int64_t width =
      graph.ShapeOf(x).value_or(TensorShape()).dims.empty() ? 0 : graph.ShapeOf(x)->dims.back();
  auto per_channel = [&](const std::string& tensor) {
    auto it = graph.constants.find(tensor);
    return it != graph.constants.end() && it->second.shape.dtype == kOnnxFloat &&
           static_cast<int64_t>(it->second.f32.size()) == width;
  };
  std::string gamma, beta;
  if (std::optional<size_t> scale = chains.SoleReader(out);
      scale && graph.nodes[*scale].op_type == "Mul" &&
      per_channel(Other(graph.nodes[*scale], out))) {
    gamma = Other(graph.nodes[*scale], out);
    rewrite.removed.push_back(*scale);
    out = graph.nodes[*scale].outputs[0];
    if (std::optional<size_t> shift = chains.SoleReader(out);
        shift && graph.nodes[*shift].op_type == "Add" &&
        per_channel(Other(graph.nodes[*shift], out))) {
      beta = Other(graph.nodes[*shift], out);
      rewrite.removed.push_back(*shift);
      out = graph.nodes[*shift].outputs[0];
    }
  }
  norm.inputs.push_back(gamma);  // "" when the chain has none: scale 1
  norm.inputs.push_back(beta);
  norm.outputs = {out};
  rewrite.replacement = std::move(norm);
  return rewrite;
}

// A zero constant Pad of the spatial axes read only by an AveragePool
// with no padding of its own (Inception's pooling branches) from its Pad
// node: the pool with those pads, counting them (count_include_pad), so
// the window is the same taps of the same zeros without the padded copy.
std::optional<Rewrite> MatchPaddedAveragePool(const Graph& graph, const Chains& chains,
                                              size_t pad) {
  const GraphNode& p = graph.nodes[pad];
  if (p.inputs.empty() || StringAttribute(p, "mode", "constant") != "constant") {
    return std::nullopt;
  }
  if (p.attributes.value("value", 0.0f) != 0.0f) return std::nullopt;
  if (p.inputs.size() > 2 && !p.inputs[2].empty() && chains.Scalar(p.inputs[2]) != 0.0f) {
    return std::nullopt;
  }
  const int64_t rank =
      static_cast<int64_t>(graph.ShapeOf(p.inputs[0]).value_or(TensorShape()).dims.size());
  if (rank != 3 && rank != 4) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> pads = PadsOf(graph, p, rank);
  if (!pads.ok() || (*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 ||
      (*pads)[rank + 1] != 0) {
    return std::nullopt;
  }
  std::vector<int64_t> window;  // the spatial begins, then the ends
  for (int64_t d = 2; d < rank; ++d) window.push_back((*pads)[d]);
  for (int64_t d = 2; d < rank; ++d) window.push_back((*pads)[rank + d]);
  if (std::any_of(window.begin(), window.end(), [](int64_t v) { return v < 0; })) {
    return std::nullopt;
  }
  std::optional<size_t> reader = chains.SoleReader(p.outputs[0]);
  if (!reader || graph.nodes[*reader].op_type != "AveragePool") return std::nullopt;
  const GraphNode& pool = graph.nodes[*reader];
  const std::vector<int64_t> own = IntsAttribute(pool, "pads", {});
  if (StringAttribute(pool, "auto_pad", "NOTSET") != "NOTSET" ||
      std::any_of(own.begin(), own.end(), [](int64_t v) { return v != 0; })) {
    return std::nullopt;
  }
  Rewrite rewrite;
  rewrite.removed = {pad, *reader};
  rewrite.replacement = pool;
  rewrite.replacement.inputs[0] = p.inputs[0];
  rewrite.replacement.attributes["pads"] = window;
  rewrite.replacement.attributes["count_include_pad"] = 1;
  return rewrite;
}

// ShuffleNet's channel shuffle from its first Reshape: [N, C, H, W] ->
// [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4), Reshape back to
// [N, C, H, W]: output channel j is input channel (j % g) * C/g + j / g,
// a Gather of the channels with those constant indices (which the
// emitter runs in the input's channel block).
std::optional<Rewrite> MatchChannelShuffle(const Graph& graph, const Chains& chains,
                                           size_t reshape) {
  const GraphNode& r = graph.nodes[reshape];
  if (r.inputs.empty() || r.outputs.empty()) return std::nullopt;
  const std::vector<int64_t> in = graph.ShapeOf(r.inputs[0]).value_or(TensorShape()).dims;
  const std::vector<int64_t> split = graph.ShapeOf(r.outputs[0]).value_or(TensorShape()).dims;
  if (in.size() != 4 || split.size() != 5 || split[0] != in[0] || split[1] * split[2] != in[1] ||
      split[3] != in[2] || split[4] != in[3] || split[1] < 2 || split[2] < 2) {
    return std::nullopt;
  }
  std::optional<size_t> transpose = chains.SoleReader(r.outputs[0]);
  if (!transpose || graph.nodes[*transpose].op_type != "Transpose" ||
      IntsAttribute(graph.nodes[*transpose], "perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4}) {
    return std::nullopt;
  }
  std::optional<size_t> back = chains.SoleReader(graph.nodes[*transpose].outputs[0]);
  if (!back || graph.nodes[*back].op_type != "Reshape" ||
      graph.ShapeOf(graph.nodes[*back].outputs[0]).value_or(TensorShape()).dims != in) {
    return std::nullopt;
  }
  const int64_t groups = split[1], per_group = split[2];
  ConstantTensor indices;
  indices.shape = {kOnnxInt64, {in[1]}};
  for (int64_t j = 0; j < in[1]; ++j) indices.i64.push_back((j % groups) * per_group + j / groups);
  const std::string name = absl::StrCat(r.name, ".shuffle");
  Rewrite rewrite;
  rewrite.removed = {reshape, *transpose, *back};
  rewrite.replacement = {
      name, "Gather", {r.inputs[0], name + ".indices"}, {graph.nodes[*back].outputs[0]}};
  rewrite.replacement.attributes["axis"] = 1;
  rewrite.constants[name + ".indices"] = std::move(indices);
  return rewrite;
}

}  // namespace

[[nodiscard]] absl::Status FusePatterns(Graph* graph) {
  std::vector<Rewrite> rewrites;
  std::set<size_t> taken;
  {
    const Chains chains(*graph);
    for (size_t i = 0; i < graph->nodes.size(); ++i) {
      const std::string& op = graph->nodes[i].op_type;
      std::optional<Rewrite> rewrite;
      if (op == "Erf") rewrite = MatchGelu(*graph, chains, i);
      if (op == "Tanh") rewrite = MatchGeluTanh(*graph, chains, i);
      if (op == "Sigmoid") rewrite = MatchSilu(*graph, chains, i);
      if (op == "ReduceMean") rewrite = MatchLayerNorm(*graph, chains, i);
      if (op == "Pad") rewrite = MatchPaddedAveragePool(*graph, chains, i);
      if (op == "Reshape") rewrite = MatchChannelShuffle(*graph, chains, i);
      if (!rewrite) continue;
      bool overlaps = false;
      for (size_t r : rewrite->removed) overlaps |= taken.count(r) > 0;
      if (overlaps) continue;
      taken.insert(rewrite->removed.begin(), rewrite->removed.end());
      rewrites.push_back(std::move(*rewrite));
    }
  }
  if (rewrites.empty()) return absl::OkStatus();
  // Each replacement takes the place of the last node it removes, where
  // every input it reads is computed (topological order holds).
  std::map<size_t, GraphNode> placed;
  for (Rewrite& rewrite : rewrites) {
    for (auto& [name, constant] : rewrite.constants) {
      graph->shapes[name] = constant.shape;
      graph->constants[name] = std::move(constant);
    }
    size_t last = 0;
    for (size_t r : rewrite.removed) last = std::max(last, r);
    placed[last] = std::move(rewrite.replacement);
  }
  std::vector<GraphNode> nodes;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (auto it = placed.find(i); it != placed.end()) {
      nodes.push_back(std::move(it->second));
    } else if (!taken.count(i)) {
      nodes.push_back(std::move(graph->nodes[i]));
    }
  }
  graph->nodes = std::move(nodes);
  return absl::OkStatus();
}

}  // namespace tunefleet
