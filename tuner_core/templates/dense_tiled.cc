#include "tuner_core/templates/dense_tiled.h"

#include "common/status_macros.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_tiled", "dense",
    "AutoTVM tutorial matmul: tile_y x tile_x splits, loops (yo, xo, k, yi, xi)",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_y", dense->m()));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_x", dense->n()));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_y, config.GetSplit("tile_y"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_x, config.GetSplit("tile_x"));
  const int64_t M = dense->m(), N = dense->n(), K = dense->k();
  const int64_t yi_extent = tile_y[1], xi_extent = tile_x[1];
  if (tile_y[0] * yi_extent != M || tile_x[0] * xi_extent != N) {
    return absl::InvalidArgumentError("dense_tiled: splits must divide M and N exactly");
  }
  Expr yo = Var::Make("yo"), xo = Var::Make("xo"), k = Var::Make("k");
  Expr yi = Var::Make("yi"), xi = Var::Make("xi"), y = Var::Make("y"), x = Var::Make("x");
  Expr row = yo * yi_extent + yi, col = xo * xi_extent + xi;
  Expr b_index = dense->layout() == DenseWorkload::Layout::kNK ? col * K + k : k * N + col;

  Stmt zero = For::Make("y", 0, M, ForKind::kSerial,
                        For::Make("x", 0, N, ForKind::kSerial, Store::Make("C", 0.0, y * N + x)));
  Stmt update = Store::Make(
      "C", Load::Make("C", row * N + col) + Load::Make("A", row * K + k) * Load::Make("B", b_index),
      row * N + col);
  Stmt nest = For::Make("xi", 0, xi_extent, ForKind::kSerial, update);
  nest = For::Make("yi", 0, yi_extent, ForKind::kSerial, nest);
  nest = For::Make("k", 0, K, ForKind::kSerial, nest);
  nest = For::Make("xo", 0, tile_x[0], ForKind::kSerial, nest);
  nest = For::Make("yo", 0, tile_y[0], ForKind::kSerial, nest);

  return KernelFunc(DenseTiledTemplate(), workload, Block::Make({zero, nest}));
}

const Template& DenseTiledTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet
