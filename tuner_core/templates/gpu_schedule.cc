#include "tuner_core/templates/gpu_schedule.h"

#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {

using namespace ir;  // NOLINT

SplitOptions GpuThreadSplit(int64_t max_threads, int64_t max_inner) {
  SplitOptions options;
  options.num_outputs = 3;
  options.filter = [max_threads, max_inner](const std::vector<int64_t>& sizes) {
    return sizes[1] <= max_threads && sizes[2] <= max_inner;
  };
  return options;
}

Stmt CooperativeLoad(const GpuBlockShape& shape, const std::string& name, int64_t total,
                     const Expr& t, const std::function<Stmt(Expr)>& body) {
  const int64_t count = shape.count();
  const int64_t rounds = CeilDiv(total, count);
  const ForKind kind = rounds <= 8 ? ForKind::kUnrolled : ForKind::kSerial;
  return Loop(name, rounds, kind, [&](Expr l) {
    Expr e = l * count + t;
    if (total % count == 0) return body(e);
    return IfThenElse::Make(e < total, body(e));
  });
}

}  // namespace tunefleet
