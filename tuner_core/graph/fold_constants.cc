#include "tuner_core/graph/fold_constants.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// A constant's values as doubles (integers are exact below 2^53, far beyond
// any shape or index), and back.
std::vector<double> Values(const ConstantTensor& t) {
  if (IsIntegerDtype(t.shape.dtype)) return std::vector<double>(t.i64.begin(), t.i64.end());
  return std::vector<double>(t.f32.begin(), t.f32.end());
}

ConstantTensor Make(int dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
  ConstantTensor t;
  t.shape.dtype = dtype;
  t.shape.dims = std::move(dims);
  for (double v : values) {
    if (IsIntegerDtype(dtype)) {
      t.i64.push_back(static_cast<int64_t>(v));
    } else {
      t.f32.push_back(static_cast<float>(v));
    }
  }
  return t;
}

// Whether the folder holds this dtype's values (float32 or an integer kind).
bool Foldable(const ConstantTensor& t) {
  return t.shape.dtype == kOnnxFloat || IsIntegerDtype(t.shape.dtype);
}

// `values` of shape `dims` read at every index of `out` (which `dims`
// broadcasts to).
std::vector<double> BroadcastTo(const std::vector<double>& values, const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& out) {
  const std::vector<int64_t> index = BroadcastIndices(dims, out);
  std::vector<double> result(index.size());
  for (size_t i = 0; i < index.size(); ++i) result[i] = values[index[i]];
  return result;
}

// The values a window (Slice, Transpose) reads of `values`.
std::vector<double> StridedGather(const std::vector<double>& values, const SliceWindow& window) {
  int64_t total = 1;
  for (int64_t d : window.out_shape) total *= d;
  std::vector<double> out(total);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, at = window.offset;
    for (int64_t d = static_cast<int64_t>(window.out_shape.size()) - 1; d >= 0; --d) {
      at += (rest % window.out_shape[d]) * window.strides[d];
      rest /= window.out_shape[d];
    }
    out[i] = values[at];
  }
  return out;
}

using Elementwise = std::function<double(double, double)>;

const std::map<std::string, Elementwise>& BinaryOps() {
  static const auto* ops = new std::map<std::string, Elementwise>{
      {"Add", [](double x, double y) { return x + y; }},
      {"Sum", [](double x, double y) { return x + y; }},
      {"Sub", [](double x, double y) { return x - y; }},
      {"Mul", [](double x, double y) { return x * y; }},
      {"Pow", [](double x, double y) { return std::pow(x, y); }},
      {"Max", [](double x, double y) { return std::max(x, y); }},
      {"Min", [](double x, double y) { return std::min(x, y); }},
      {"Equal", [](double x, double y) { return x == y ? 1.0 : 0.0; }},
      {"Less", [](double x, double y) { return x < y ? 1.0 : 0.0; }},
      {"Greater", [](double x, double y) { return x > y ? 1.0 : 0.0; }},
      {"LessOrEqual", [](double x, double y) { return x <= y ? 1.0 : 0.0; }},
      {"GreaterOrEqual", [](double x, double y) { return x >= y ? 1.0 : 0.0; }},
      {"And", [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; }},
      {"Or", [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; }},
  };
  return *ops;
}

const std::map<std::string, std::function<double(double)>>& UnaryOps() {
  static const auto* ops = new std::map<std::string, std::function<double(double)>>{
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Reciprocal", [](double x) { return 1 / x; }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Not", [](double x) { return x == 0 ? 1.0 : 0.0; }},
      // Float functions of constants: Swin-V2's position-bias MLP and logit
      // scale are computed from its buffers alone.
      {"Relu", [](double x) { return std::max(x, 0.0); }},
      {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Erf", [](double x) { return std::erf(x); }},
  };
  return *ops;
}

// MatMul of two constants of rank 2 or more (numpy's broadcasting of the
// leading dimensions), in double.
[[nodiscard]] absl::StatusOr<std::optional<ConstantTensor>> FoldMatMul(const GraphNode& node,
                                                                       const ConstantTensor& a,
                                                                       const ConstantTensor& b) {
  const std::vector<int64_t>& ad = a.shape.dims;
  const std::vector<int64_t>& bd = b.shape.dims;
  if (ad.size() < 2 || bd.size() < 2 || a.shape.dtype != kOnnxFloat ||
      b.shape.dtype != kOnnxFloat) {
    return std::optional<ConstantTensor>();
  }
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k) return NodeError(node, "shapes do not multiply");
  const std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  std::optional<std::vector<int64_t>> batch = BroadcastShapes(a_batch, b_batch);
  if (!batch) return NodeError(node, "batch dimensions do not broadcast");
  // Each operand's matrix for each of the output's.
  const std::vector<int64_t> which_a = BroadcastIndices(a_batch, *batch);
  const std::vector<int64_t> which_b = BroadcastIndices(b_batch, *batch);
  int64_t a_count = m * k, b_count = k * n;
  for (int64_t d : a_batch) a_count *= d;
  for (int64_t d : b_batch) b_count *= d;
  if (static_cast<int64_t>(a.f32.size()) != a_count ||
      static_cast<int64_t>(b.f32.size()) != b_count) {
    return NodeError(node, "a constant holds fewer or more values than its shape");
  }
  // Beyond a second or so of compile time it stays a node (a tuned kernel).
  if (static_cast<double>(which_a.size()) * m * n * k > 1e9) return std::optional<ConstantTensor>();
  std::vector<int64_t> dims = *batch;
  dims.push_back(m);
  dims.push_back(n);
  std::vector<double> values(which_a.size() * m * n, 0.0);
  for (size_t t = 0; t < which_a.size(); ++t) {
    const float* am = a.f32.data() + which_a[t] * m * k;
    const float* bm = b.f32.data() + which_b[t] * k * n;
    double* out = values.data() + t * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) {
        const double x = am[i * k + p];
        for (int64_t j = 0; j < n; ++j) out[i * n + j] += x * bm[p * n + j];
      }
    }
  }
  return Make(kOnnxFloat, dims, values);
}

// Gemm of float constants: alpha * A' B' + beta * C (C broadcast to [M, N]).
[[nodiscard]] absl::StatusOr<std::optional<ConstantTensor>> FoldGemm(const Graph& graph,
                                                                     const GraphNode& node) {
  const ConstantTensor& a = graph.constants.at(node.inputs[0]);
  const ConstantTensor& b = graph.constants.at(node.inputs[1]);
  const std::vector<int64_t>&ad = a.shape.dims, &bd = b.shape.dims;
  if (ad.size() != 2 || bd.size() != 2 || a.shape.dtype != kOnnxFloat ||
      b.shape.dtype != kOnnxFloat) {
    return std::optional<ConstantTensor>();
  }
  const bool ta = IntAttribute(node, "transA", 0) != 0, tb = IntAttribute(node, "transB", 0) != 0;
  const int64_t m = ta ? ad[1] : ad[0], k = ta ? ad[0] : ad[1], n = tb ? bd[0] : bd[1];
  if ((tb ? bd[1] : bd[0]) != k) return NodeError(node, "shapes do not multiply");
  if (static_cast<int64_t>(a.f32.size()) != m * k || static_cast<int64_t>(b.f32.size()) != k * n) {
    return NodeError(node, "a constant holds fewer or more values than its shape");
  }
  if (static_cast<double>(m) * n * k > 1e9) return std::optional<ConstantTensor>();
  const double alpha = node.attributes.value("alpha", 1.0),
               beta = node.attributes.value("beta", 1.0);
  std::vector<double> values(m * n, 0.0);
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    const ConstantTensor& c = graph.constants.at(node.inputs[2]);
    if (!BroadcastShapes(c.shape.dims, {m, n})) return NodeError(node, "C does not broadcast");
    values = BroadcastTo(Values(c), c.shape.dims, {m, n});
    for (double& v : values) v *= beta;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a.f32[ta ? p * m + i : i * k + p]) *
               b.f32[tb ? j * k + p : p * n + j];
      }
      values[i * n + j] += alpha * sum;
    }
  }
  return Make(kOnnxFloat, {m, n}, values);
}

// The folded output of `node` (all of whose inputs are constants, except
// Shape's), or nullopt when the node is not one this pass folds.
[[nodiscard]] absl::StatusOr<std::optional<ConstantTensor>> Fold(const Graph& graph,
                                                                 const GraphNode& node) {
  const std::string& op = node.op_type;
  auto input = [&](size_t i) -> const ConstantTensor& {
    return graph.constants.at(node.inputs[i]);
  };
  const std::optional<ConstantTensor> not_folded;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!(op == "Shape" && i == 0) && !node.inputs[i].empty() && !Foldable(input(i))) {
      return not_folded;  // a dtype whose values import did not keep
    }
  }
  // The output's shape as shape inference found it (ONNX shapes are static
  // here); a reshape is folded once it is known (CompleteShapes' next round).
  std::vector<int64_t> out_dims;
  const auto out_shape = graph.shapes.find(node.outputs[0]);
  if (out_shape != graph.shapes.end()) out_dims = out_shape->second.dims;
  if (op == "Shape") {
    if (!graph.shapes.count(node.inputs[0])) return not_folded;  // known in a later round
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph.ShapeOf(node.inputs[0], &node));
    const int64_t rank = static_cast<int64_t>(shape.dims.size());
    int64_t start = IntAttribute(node, "start", 0), end = IntAttribute(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<double> dims(shape.dims.begin() + start, shape.dims.begin() + end);
    return Make(kOnnxInt64, {end - start}, dims);
  }
  if (op == "Identity" || op == "Dropout") return input(0);
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    if (out_shape == graph.shapes.end()) return not_folded;
    ConstantTensor t = input(0);
    t.shape.dims = out_dims;
    if (t.shape.NumElements() != input(0).shape.NumElements()) {
      return NodeError(node, "output shape unknown or of another size");
    }
    return t;
  }
  if (op == "Cast") {
    const int to = static_cast<int>(IntAttribute(node, "to", 0));
    if (to != kOnnxFloat && !IsIntegerDtype(to)) return not_folded;
    std::vector<double> values = Values(input(0));
    if (to == kOnnxBool) {
      for (double& v : values) v = v != 0 ? 1 : 0;
    } else if (IsIntegerDtype(to)) {
      for (double& v : values) v = std::trunc(v);
    }
    return Make(to, input(0).shape.dims, values);
  }
  if (op == "ConstantOfShape") {
    // value: a one-element tensor attribute (import keeps it as
    // {"dtype", "dims", "values"}); float 0 when absent.
    int dtype = kOnnxFloat;
    double value = 0;
    if (node.attributes.contains("value")) {
      const nlohmann::json& v = node.attributes["value"];
      if (!v.is_object() || !v.contains("values") || v["values"].size() != 1) {
        return NodeError(node, "value is not a one-element tensor");
      }
      dtype = v["dtype"].get<int>();
      value = v["values"][0].get<double>();
    }
    std::vector<int64_t> dims;
    for (double d : Values(input(0))) dims.push_back(static_cast<int64_t>(d));
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    if (n < 0 || n > (int64_t{1} << 28)) return NodeError(node, "shape out of range");
    return Make(dtype, dims, std::vector<double>(n, value));
  }
  if (op == "Range") {
    const double start = Values(input(0)).at(0), limit = Values(input(1)).at(0),
                 delta = Values(input(2)).at(0);
    if (delta == 0) return NodeError(node, "delta 0");
    const int64_t n =
        std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = start + i * delta;
    return Make(input(0).shape.dtype, {n}, values);
  }
  if (op == "Expand") {
    std::vector<int64_t> shape;
    for (double d : Values(input(1))) shape.push_back(static_cast<int64_t>(d));
    std::optional<std::vector<int64_t>> out = BroadcastShapes(input(0).shape.dims, shape);
    if (!out) return NodeError(node, "shape does not broadcast");
    return Make(input(0).shape.dtype, *out,
                BroadcastTo(Values(input(0)), input(0).shape.dims, *out));
  }
  if (op == "Where") {
    std::optional<std::vector<int64_t>> out =
        BroadcastShapes(input(0).shape.dims, input(1).shape.dims);
    if (out) out = BroadcastShapes(*out, input(2).shape.dims);
    if (!out) return NodeError(node, "inputs do not broadcast");
    const std::vector<double> c = BroadcastTo(Values(input(0)), input(0).shape.dims, *out);
    const std::vector<double> x = BroadcastTo(Values(input(1)), input(1).shape.dims, *out);
    const std::vector<double> y = BroadcastTo(Values(input(2)), input(2).shape.dims, *out);
    std::vector<double> values(c.size());
    for (size_t i = 0; i < c.size(); ++i) values[i] = c[i] != 0 ? x[i] : y[i];
    return Make(input(1).shape.dtype, *out, values);
  }
  if (op == "Gather") {
    const ConstantTensor& data = input(0);
    const int64_t rank = static_cast<int64_t>(data.shape.dims.size());
    TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
    const std::vector<double> values = Values(data), indices = Values(input(1));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data.shape.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= data.shape.dims[d];
    const int64_t n = data.shape.dims[axis];
    std::vector<double> out;
    for (int64_t o = 0; o < outer; ++o) {
      for (double v : indices) {
        int64_t i = static_cast<int64_t>(v);
        if (i < 0) i += n;
        if (i < 0 || i >= n) return NodeError(node, absl::StrCat("index ", v, " out of range"));
        for (int64_t k = 0; k < inner; ++k) out.push_back(values[(o * n + i) * inner + k]);
      }
    }
    std::vector<int64_t> dims(data.shape.dims.begin(), data.shape.dims.begin() + axis);
    dims.insert(dims.end(), input(1).shape.dims.begin(), input(1).shape.dims.end());
    dims.insert(dims.end(), data.shape.dims.begin() + axis + 1, data.shape.dims.end());
    return Make(data.shape.dtype, dims, out);
  }
  if (op == "ScatterND") {
    // data with the rows `indices` names replaced (or added to, multiplied
    // by: opset 16's reduction) by `updates`' rows, in order.
    const ConstantTensor &data = input(0), &indices = input(1), &updates = input(2);
    const std::string reduction = StringAttribute(node, "reduction", "none");
    if (reduction != "none" && reduction != "add" && reduction != "mul") {
      return NodeError(node, absl::StrCat("reduction '", reduction, "' is not supported"));
    }
    const std::vector<int64_t>& dims = data.shape.dims;
    if (indices.shape.dims.empty()) return NodeError(node, "indices of rank 0");
    const int64_t k = indices.shape.dims.back();
    if (k < 1 || k > static_cast<int64_t>(dims.size())) {
      return NodeError(node, absl::StrCat("index rows of ", k, " for data of rank ", dims.size()));
    }
    const std::vector<int64_t> strides = RowMajorStrides(dims);
    const int64_t slice = k == static_cast<int64_t>(dims.size()) ? 1 : strides[k - 1];
    const std::vector<double> index = Values(indices), rows = Values(updates);
    const int64_t count = static_cast<int64_t>(index.size()) / k;
    if (static_cast<int64_t>(rows.size()) != count * slice) {
      return NodeError(node, "updates do not match indices");
    }
    std::vector<double> values = Values(data);
    for (int64_t u = 0; u < count; ++u) {
      int64_t at = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t i = static_cast<int64_t>(index[u * k + d]);
        if (i < 0) i += dims[d];
        if (i < 0 || i >= dims[d]) {
          return NodeError(node, absl::StrCat("index ", index[u * k + d], " out of range"));
        }
        at += i * strides[d];
      }
      for (int64_t s = 0; s < slice; ++s) {
        double& v = values[at + s];
        const double x = rows[u * slice + s];
        v = reduction == "add" ? v + x : reduction == "mul" ? v * x : x;
      }
    }
    return Make(data.shape.dtype, dims, values);
  }
  if (op == "Concat") {
    const int64_t rank = static_cast<int64_t>(input(0).shape.dims.size());
    TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= input(0).shape.dims[d];
    std::vector<int64_t> dims = input(0).shape.dims;
    dims[axis] = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (static_cast<int64_t>(input(i).shape.dims.size()) != rank) {
        return NodeError(node, "inputs of other ranks");
      }
      dims[axis] += input(i).shape.dims[axis];
    }
    std::vector<double> out;
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const std::vector<double> values = Values(input(i));
        const int64_t run = static_cast<int64_t>(values.size()) / std::max<int64_t>(outer, 1);
        out.insert(out.end(), values.begin() + o * run, values.begin() + (o + 1) * run);
      }
    }
    return Make(input(0).shape.dtype, dims, out);
  }
  if (op == "Slice" || op == "Transpose") {
    SliceWindow step;
    if (op == "Slice") {
      TF_ASSIGN_OR_RETURN(step, SliceWindowOf(graph, node, input(0).shape.dims));
    } else {
      const std::vector<int64_t>& dims = input(0).shape.dims;
      std::vector<int64_t> reversed;
      for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) reversed.push_back(d);
      const std::vector<int64_t> strides = RowMajorStrides(dims);
      for (int64_t p : IntsAttribute(node, "perm", reversed)) {
        if (p < 0 || p >= static_cast<int64_t>(dims.size())) return NodeError(node, "bad perm");
        step.out_shape.push_back(dims[p]);
        step.strides.push_back(strides[p]);
      }
    }
    return Make(input(0).shape.dtype, step.out_shape, StridedGather(Values(input(0)), step));
  }
  if (op == "MatMul" && node.inputs.size() == 2) return FoldMatMul(node, input(0), input(1));
  if (op == "Gemm" && node.inputs.size() >= 2) return FoldGemm(graph, node);
  if (op == "Clip" && input(0).shape.dtype == kOnnxFloat) {
    // Bounds from the attributes (opset < 11) or the optional inputs.
    double lo = node.attributes.value("min", -INFINITY),
           hi = node.attributes.value("max", INFINITY);
    for (size_t i = 1; i < std::min<size_t>(node.inputs.size(), 3); ++i) {
      if (node.inputs[i].empty()) continue;
      const std::vector<double> bound = Values(input(i));
      if (bound.size() != 1) return NodeError(node, "a bound is not a scalar");
      (i == 1 ? lo : hi) = bound[0];
    }
    std::vector<double> values = Values(input(0));
    for (double& v : values) v = std::min(std::max(v, lo), hi);
    return Make(kOnnxFloat, input(0).shape.dims, values);
  }
  if (auto unary = UnaryOps().find(op); unary != UnaryOps().end() && node.inputs.size() == 1) {
    std::vector<double> values = Values(input(0));
    for (double& v : values) v = unary->second(v);
    return Make(op == "Not" ? kOnnxBool : input(0).shape.dtype, input(0).shape.dims, values);
  }
  const bool divide = op == "Div" || op == "Mod";
  auto binary = BinaryOps().find(op);
  if ((binary != BinaryOps().end() || divide) && node.inputs.size() == 2) {
    std::optional<std::vector<int64_t>> out =
        BroadcastShapes(input(0).shape.dims, input(1).shape.dims);
    if (!out) return NodeError(node, "inputs do not broadcast");
    const std::vector<double> a = BroadcastTo(Values(input(0)), input(0).shape.dims, *out);
    const std::vector<double> b = BroadcastTo(Values(input(1)), input(1).shape.dims, *out);
    const int dtype = input(0).shape.dtype;
    const bool integer = IsIntegerDtype(dtype);
    std::vector<double> values(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (divide) {
        if (integer && b[i] == 0) return NodeError(node, "divides by 0");
        if (op == "Div") {
          values[i] =
              integer ? static_cast<double>(static_cast<int64_t>(a[i]) / static_cast<int64_t>(b[i]))
                      : a[i] / b[i];
        } else {
          // fmod=1: C's fmod; else (ONNX's default) the remainder takes the
          // divisor's sign, as Python's %.
          double r =
              integer ? static_cast<double>(static_cast<int64_t>(a[i]) % static_cast<int64_t>(b[i]))
                      : std::fmod(a[i], b[i]);
          if (IntAttribute(node, "fmod", 0) == 0 && r != 0 && ((r < 0) != (b[i] < 0))) r += b[i];
          values[i] = r;
        }
      } else {
        values[i] = binary->second(a[i], b[i]);
      }
    }
    const bool compares = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
                          op == "GreaterOrEqual" || op == "And" || op == "Or";
    return Make(compares ? kOnnxBool : dtype, *out, values);
  }
  return not_folded;
}

}  // namespace

[[nodiscard]] absl::StatusOr<Graph> FoldConstants(Graph graph) {
  std::vector<GraphNode> kept;
  for (GraphNode& node : graph.nodes) {
    // Fold says which operators it evaluates (nullopt for the others).
    bool all_constant = !node.inputs.empty() && node.outputs.size() == 1;
    for (size_t i = 0; i < node.inputs.size() && all_constant; ++i) {
      const bool shape_only = node.op_type == "Shape" && i == 0;
      // An omitted optional input (Slice's steps, Clip's max) folds as absent.
      if (node.inputs[i].empty()) {
        if (node.op_type != "Slice" && node.op_type != "Clip" && node.op_type != "Gemm") {
          all_constant = false;
        }
        continue;
      }
      if (!shape_only && !graph.IsConstant(node.inputs[i])) all_constant = false;
    }
    if (all_constant) {
      TF_ASSIGN_OR_RETURN(std::optional<ConstantTensor> folded, Fold(graph, node));
      if (folded) {
        graph.shapes[node.outputs[0]] = folded->shape;
        graph.constants[node.outputs[0]] = std::move(*folded);
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return graph;
}

}  // namespace tunefleet
