// Reference for bench/dense_bench: times oneDNN on one dense shape in its own
// process (oneDNN's OpenMP pool must not share a process with ours). Two ways:
//   sgemm   dnnl_sgemm, row-major, B transposed for NK: the weights are read
//           in their plain layout on every call (no packing credit)
//   packed  the matmul primitive with weights in format_tag::any (oneDNN
//           picks its blocked layout); the reorder from the plain layout runs
//           once before the timing, as a compiled model reorders its weights
// Prints one JSON object: {"gflops": median, "runs": [...], "impl": ...}.
//   onednn_sgemm M N K threads rounds NK|KN sgemm|packed
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/gemm_timing.h"
#include "oneapi/dnnl/dnnl.h"
#include "oneapi/dnnl/dnnl.hpp"

using tunefleet::bench::PrintGflopsJson;
using tunefleet::bench::TimeGemmRounds;

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s M N K threads rounds NK|KN sgemm|packed\n", argv[0]);
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int threads = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  const bool nk = std::string(argv[6]) == "NK";
  const std::string mode = argv[7];
  omp_set_num_threads(threads);
  std::vector<float> a(m * k, 0.5f), b(n * k, 0.25f), c(m * n);
  const double flops = 2.0 * m * n * k;
  std::vector<double> gflops;
  std::string impl = "dnnl_sgemm";
  try {
    if (mode == "sgemm") {
      gflops = TimeGemmRounds(
          [&] {
            dnnl_sgemm('N', nk ? 'T' : 'N', m, n, k, 1.0f, a.data(), k, b.data(), nk ? k : n, 0.0f,
                       c.data(), n);
          },
          flops, rounds);
    } else if (mode == "packed") {
      using Tag = dnnl::memory::format_tag;
      using Dt = dnnl::memory::data_type;
      dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      dnnl::stream stream(engine);
      dnnl::memory::desc src_md({m, k}, Dt::f32, Tag::ab);
      dnnl::memory::desc dst_md({m, n}, Dt::f32, Tag::ab);
      // Weights as the matmul sees them: K x N; NK storage is its "ba".
      dnnl::memory::desc wei_plain_md({k, n}, Dt::f32, nk ? Tag::ba : Tag::ab);
      dnnl::memory::desc wei_any_md({k, n}, Dt::f32, Tag::any);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any_md, dst_md), engine);
      impl = std::string("matmul:") + pd.impl_info_str();
      dnnl::memory src(src_md, engine, a.data()), dst(dst_md, engine, c.data());
      dnnl::memory wei_plain(wei_plain_md, engine, b.data());
      dnnl::memory wei(pd.weights_desc(), engine);
      dnnl::reorder(wei_plain, wei).execute(stream, wei_plain, wei);
      stream.wait();
      dnnl::matmul matmul(pd);
      gflops = TimeGemmRounds(
          [&] {
            matmul.execute(stream,
                           {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
            stream.wait();
          },
          flops, rounds);
    } else {
      std::fprintf(stderr, "unknown mode %s (sgemm|packed)\n", mode.c_str());
      return 2;
    }
  } catch (const dnnl::error& e) {
    std::printf("{\"error\": \"oneDNN: %s\"}\n", e.what());
    return 1;
  }
  PrintGflopsJson(gflops, "impl", impl);
  return 0;
}
