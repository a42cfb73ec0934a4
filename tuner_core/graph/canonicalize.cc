#include "tuner_core/graph/canonicalize.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// ConvTranspose(x, W [C, K/g, kh, kw], B) as Conv(Dilate(x), W') with W'
// [K, C/g, kh, kw] the flipped kernel: output position o of the transposed
// convolution gathers x[i] * W[o - i * s + p] (dilated), which is a stride-1
// convolution of x spread by s and padded by d * (k - 1) - p (begin) and
// d * (k - 1) - p + output_padding (end).
[[nodiscard]] absl::Status LowerConvTranspose(Graph* graph, const GraphNode& node,
                                              std::vector<GraphNode>* nodes) {
  if (node.inputs.size() < 2) return NodeError(node, "needs input and weights");
  auto w = graph->constants.find(node.inputs[1]);
  if (w == graph->constants.end() || w->second.shape.dtype != kOnnxFloat) {
    return NodeError(node, "weights are not a float32 constant");
  }
  const std::vector<int64_t>& wd = w->second.shape.dims;
  if (wd.size() != 4) return NodeError(node, "only 2-D ConvTranspose is supported");
  const int64_t group = IntAttribute(node, "group", 1), c = wd[0], kg = wd[1];
  if (group < 1 || c % group != 0) return NodeError(node, "group does not divide the channels");
  const std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape", {wd[2], wd[3]});
  const std::vector<int64_t> strides = IntsAttribute(node, "strides", {1, 1});
  const std::vector<int64_t> dilations = IntsAttribute(node, "dilations", {1, 1});
  const std::vector<int64_t> extra = IntsAttribute(node, "output_padding", {0, 0});
  std::vector<int64_t> pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
  if (kernel != std::vector<int64_t>{wd[2], wd[3]} || strides.size() != 2 ||
      dilations.size() != 2 || extra.size() != 2 || pads.size() != 4) {
    return NodeError(node, "kernel_shape, strides, dilations, pads or output_padding do not fit");
  }
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  const std::vector<int64_t> output_shape = IntsAttribute(node, "output_shape", {});
  if (!output_shape.empty() || auto_pad != "NOTSET") {
    // The pads that give the output shape asked for (ONNX: total padding
    // s * (in - 1) + output_padding + (k - 1) * d + 1 - out; SAME_* asks
    // for in * s), the odd one at the end (SAME_UPPER, NOTSET) or start.
    auto in = graph->shapes.find(node.inputs[0]);
    if (in == graph->shapes.end() || in->second.dims.size() != 4) {
      return NodeError(node, "output_shape or auto_pad needs the input's shape");
    }
    if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
        auto_pad != "VALID") {
      return NodeError(node, absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
    }
    for (size_t d = 0; d < 2 && auto_pad != "VALID"; ++d) {
      const int64_t size = in->second.dims[2 + d];
      const int64_t want = output_shape.empty()       ? size * strides[d]
                           : output_shape.size() == 2 ? output_shape[d]
                                                      : output_shape[output_shape.size() - 2 + d];
      const int64_t total =
          strides[d] * (size - 1) + extra[d] + (kernel[d] - 1) * dilations[d] + 1 - want;
      const int64_t half = total / 2;
      pads[d] = auto_pad == "SAME_LOWER" ? total - half : half;
      pads[2 + d] = total - pads[d];
    }
    if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  }
  GraphNode dilate{
      node.name + ".spread", kDilateOp, {node.inputs[0]}, {node.name + ".spread_output"}};
  dilate.attributes["strides"] = strides;
  std::vector<int64_t> spread_pads(4);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t reach = dilations[d] * (kernel[d] - 1);
    spread_pads[d] = reach - pads[d];
    spread_pads[2 + d] = reach - pads[2 + d] + extra[d];
  }
  dilate.attributes["pads"] = spread_pads;
  // W'[g * K/g + k, ci, y, x] = W[g * C/g + ci, k, kh - 1 - y, kw - 1 - x].
  const int64_t cg = c / group, kh = wd[2], kw = wd[3];
  ConstantTensor flipped;
  flipped.shape = {kOnnxFloat, {group * kg, cg, kh, kw}};
  flipped.f32.resize(w->second.f32.size());
  const std::vector<float>& src = w->second.f32;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t k = 0; k < kg; ++k) {
      for (int64_t ci = 0; ci < cg; ++ci) {
        for (int64_t y = 0; y < kh; ++y) {
          for (int64_t x = 0; x < kw; ++x) {
            flipped.f32[(((g * kg + k) * cg + ci) * kh + y) * kw + x] =
                src[(((g * cg + ci) * kg + k) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)];
          }
        }
      }
    }
  }
  const std::string weights = node.name + ".weight_flipped";
  graph->shapes[weights] = flipped.shape;
  graph->constants[weights] = std::move(flipped);
  GraphNode conv{node.name, "Conv", {dilate.outputs[0], weights}, node.outputs};
  if (node.inputs.size() > 2) conv.inputs.push_back(node.inputs[2]);
  conv.attributes["kernel_shape"] = kernel;
  conv.attributes["dilations"] = dilations;
  if (group > 1) conv.attributes["group"] = group;
  nodes->push_back(std::move(dilate));
  nodes->push_back(std::move(conv));
  return absl::OkStatus();
}

// A Transpose of `tensor` by `perm` named `name` (its output `name`_output),
// or `tensor` itself when perm is the identity.
std::string TransposeOf(const std::string& tensor, const std::vector<int64_t>& perm,
                        const std::string& name, std::vector<GraphNode>* nodes) {
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return tensor;
  GraphNode transpose{name, "Transpose", {tensor}, {name + "_output"}};
  transpose.attributes["perm"] = perm;
  nodes->push_back(std::move(transpose));
  return name + "_output";
}

// The positions in `term` of `indices`, in their order.
std::vector<int64_t> PositionsIn(const std::string& term, const std::string& indices) {
  std::vector<int64_t> positions;
  for (char c : indices) positions.push_back(static_cast<int64_t>(term.find(c)));
  return positions;
}

// Einsum as the operators it stands for. An index of one operand that
// neither the other operand nor the output has is summed first (ReduceSum).
// One operand is then a permutation (Transpose). Of two, each index is a
// batch index (both operands and the output), the one contracted index
// (both operands only), or a free index of one operand and the output:
// A is transposed to [batch, free of A, contracted] and B to [batch,
// contracted, free of B] where they are not already, and multiplied
// (MatMul: the tuned kernels; MaxViT's attention "BGHID,BGHJD->BGHIJ" is
// one transpose of the keys and a batch_matmul). An operand with no free
// index gets a unit one (Unsqueeze), squeezed off the product again. With
// no batch index A may keep several free indices (MatMul's leading rows),
// otherwise one. The product is transposed to the output's order where
// that differs. Anything else (an ellipsis, a repeated index, two
// contracted indices) is refused with the equation and why.
class EinsumLowering {
 public:
  EinsumLowering(const GraphNode& node, std::vector<GraphNode>* nodes)
      : node_(node), nodes_(nodes) {}

  [[nodiscard]] absl::Status Lower() {
    for (char c : StringAttribute(node_, "equation", "")) {
      if (c != ' ') equation_ += c;
    }
    if (node_.outputs.size() != 1) return NodeError(node_, "needs one output");
    if (equation_.find("...") != std::string::npos) return Refuse("an ellipsis is not supported");
    const size_t arrow = equation_.find("->");
    std::vector<std::string> terms = absl::StrSplit(equation_.substr(0, arrow), ',');
    if (terms.size() != node_.inputs.size() || terms.size() > 2) {
      return Refuse(absl::StrCat("one or two operands are supported, and the node has ",
                                 node_.inputs.size(), " inputs"));
    }
    std::map<char, int> count;
    for (const std::string& term : terms) {
      for (char c : term) {
        if (!std::isalpha(static_cast<unsigned char>(c))) {
          return Refuse(absl::StrCat("'", std::string(1, c), "' is not an index letter"));
        }
        if (std::count(term.begin(), term.end(), c) > 1) {
          return Refuse(absl::StrCat("index '", std::string(1, c),
                                     "' repeats within an operand (a diagonal)"));
        }
        ++count[c];
      }
    }
    std::string out;
    if (arrow == std::string::npos) {  // implicit: the indices seen once, sorted
      for (const auto& [c, n] : count) {
        if (n == 1) out += c;
      }
    } else {
      out = equation_.substr(arrow + 2);
    }
    for (char c : out) {
      if (!count.count(c) || std::count(out.begin(), out.end(), c) > 1) {
        return Refuse(
            absl::StrCat("output index '", std::string(1, c), "' is repeated or in no operand"));
      }
    }
    std::vector<std::string> tensors = node_.inputs;
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::string other = terms.size() == 2 ? terms[1 - i] : "";
      SumOwnIndices(&terms[i], &tensors[i], out + other, absl::StrCat(".sum", i));
    }
    if (terms.size() == 1) {
      Finish(tensors[0], terms[0], out);
      return absl::OkStatus();
    }
    return Multiply(terms[0], tensors[0], terms[1], tensors[1], out);
  }

 private:
  [[nodiscard]] absl::Status Refuse(const std::string& why) const {
    return NodeError(node_, absl::StrCat("equation '", equation_, "': ", why));
  }

  // A new node `suffix` of `op` on `input`, its output returned.
  std::string Add(const std::string& suffix, const std::string& op, const std::string& input,
                  nlohmann::json attributes) {
    GraphNode added{node_.name + suffix, op, {input}, {node_.name + suffix + "_output"}};
    added.attributes = std::move(attributes);
    nodes_->push_back(std::move(added));
    return node_.name + suffix + "_output";
  }

  // Sums the indices of `term` that `kept` lacks, dropping them from it.
  void SumOwnIndices(std::string* term, std::string* tensor, const std::string& kept,
                     const std::string& suffix) {
    std::vector<int64_t> axes;
    std::string rest;
    for (size_t d = 0; d < term->size(); ++d) {
      if (kept.find((*term)[d]) == std::string::npos) {
        axes.push_back(static_cast<int64_t>(d));
      } else {
        rest += (*term)[d];
      }
    }
    if (axes.empty()) return;
    *tensor = Add(suffix, "ReduceSum", *tensor, {{"axes", axes}, {"keepdims", 0}});
    *term = rest;
  }

  // The node's output: `tensor` (indices `term`) in the order of `out`.
  void Finish(const std::string& tensor, const std::string& term, const std::string& out) {
    GraphNode last{node_.name, "Identity", {tensor}, node_.outputs};
    if (term != out) {
      last.op_type = "Transpose";
      last.attributes["perm"] = PositionsIn(term, out);
    }
    nodes_->push_back(std::move(last));
  }

  [[nodiscard]] absl::Status Multiply(std::string a, std::string a_tensor, std::string b,
                                      std::string b_tensor, const std::string& out) {
    std::string batch, left, right, contracted;
    for (char c : out) {
      const bool in_a = a.find(c) != std::string::npos, in_b = b.find(c) != std::string::npos;
      (in_a && in_b ? batch : in_a ? left : right) += c;
    }
    for (char c : a) {
      if (out.find(c) == std::string::npos) contracted += c;
    }
    if (contracted.size() != 1 || right.size() > 1 || (!batch.empty() && left.size() > 1)) {
      return Refuse(
          "only a batched matrix product is supported (one contracted index, at most one "
          "free index of each operand, or with no batch index several of the first)");
    }
    // A unit free index where an operand has none ('1' and '2' are no letter).
    std::vector<int64_t> squeezed;
    if (left.empty()) {  // before the contracted index, where MatMul wants it
      const int64_t at = static_cast<int64_t>(a.find(contracted[0]));
      a_tensor = Add(".A_unit", "Unsqueeze", a_tensor, {{"axes", std::vector<int64_t>{at}}});
      a.insert(a.begin() + at, '1');
      left = "1";
      squeezed.push_back(static_cast<int64_t>(batch.size()));
    }
    if (right.empty()) {
      b_tensor = Add(".B_unit", "Unsqueeze", b_tensor,
                     {{"axes", std::vector<int64_t>{static_cast<int64_t>(b.size())}}});
      b += '2';
      right = "2";
      squeezed.push_back(static_cast<int64_t>(batch.size() + left.size()));
    }
    const std::string a_order = batch + left + contracted, b_order = batch + contracted + right;
    GraphNode matmul{node_.name + ".matmul",
                     "MatMul",
                     {TransposeOf(a_tensor, PositionsIn(a, a_order), node_.name + ".A_t", nodes_),
                      TransposeOf(b_tensor, PositionsIn(b, b_order), node_.name + ".B_t", nodes_)},
                     {node_.name + ".matmul_output"}};
    std::string product = batch + left + right;
    std::string result = matmul.outputs[0];
    if (squeezed.empty() && product == out) {  // the MatMul is the node
      matmul.name = node_.name;
      matmul.outputs = node_.outputs;
      nodes_->push_back(std::move(matmul));
      return absl::OkStatus();
    }
    nodes_->push_back(std::move(matmul));
    if (!squeezed.empty()) {
      result = Add(".squeeze", "Squeeze", result, {{"axes", squeezed}});
      product.erase(std::remove_if(product.begin(), product.end(),
                                   [](char c) { return c == '1' || c == '2'; }),
                    product.end());
    }
    Finish(result, product, out);
    return absl::OkStatus();
  }

  const GraphNode& node_;
  std::vector<GraphNode>* nodes_;
  std::string equation_;
};

// ReduceL2, ReduceSumSquare and ReduceL1 as ReduceSum (same axes and
// keepdims) of the squares or absolute values, then Sqrt for ReduceL2
// (F.normalize in Swin-V2's cosine attention).
void LowerNormReduction(const GraphNode& node, std::vector<GraphNode>* nodes) {
  const std::string& op = node.op_type;
  GraphNode terms{node.name + ".terms",
                  op == "ReduceL1" ? "Abs" : "Mul",
                  {node.inputs[0]},
                  {node.name + ".terms_output"}};
  if (op != "ReduceL1") terms.inputs.push_back(node.inputs[0]);
  GraphNode sum = node;
  sum.op_type = "ReduceSum";
  sum.inputs[0] = terms.outputs[0];
  nodes->push_back(std::move(terms));
  if (op != "ReduceL2") {
    nodes->push_back(std::move(sum));
    return;
  }
  sum.name = node.name + ".sum";
  sum.outputs = {node.name + ".sum_output"};
  GraphNode root{node.name, "Sqrt", sum.outputs, node.outputs};
  nodes->push_back(std::move(sum));
  nodes->push_back(std::move(root));
}

}  // namespace

[[nodiscard]] absl::Status Canonicalize(Graph* graph) {
  std::vector<GraphNode> nodes;
  nodes.reserve(graph->nodes.size());
  for (GraphNode& node : graph->nodes) {
    const std::string& op = node.op_type;
    if (op == "Max" || op == "Min" || op == "Sum") {
      if (node.inputs.empty()) return NodeError(node, "has no input");
      std::string acc = node.inputs[0];
      for (size_t i = 1; i + 1 < node.inputs.size(); ++i) {
        GraphNode part{absl::StrCat(node.name, ".part", i),
                       op,
                       {acc, node.inputs[i]},
                       {absl::StrCat(node.name, ".part", i, "_output")}};
        acc = part.outputs[0];
        nodes.push_back(std::move(part));
      }
      if (node.inputs.size() > 2) node.inputs = {acc, node.inputs.back()};
    }
    if (op == "Gemm" && IntAttribute(node, "transA", 0) != 0 && !node.inputs.empty()) {
      node.inputs[0] = TransposeOf(node.inputs[0], {1, 0}, node.name + ".A_t", &nodes);
      node.attributes.erase("transA");
    }
    if (op == "ConvTranspose") {
      TF_RETURN_IF_ERROR(LowerConvTranspose(graph, node, &nodes));
      continue;
    }
    if (op == "Einsum") {
      TF_RETURN_IF_ERROR(EinsumLowering(node, &nodes).Lower());
      continue;
    }
    if ((op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceL1") && !node.inputs.empty()) {
      LowerNormReduction(node, &nodes);
      continue;
    }
    nodes.push_back(std::move(node));
  }
  graph->nodes = std::move(nodes);
  return absl::OkStatus();
}

}  // namespace tunefleet
