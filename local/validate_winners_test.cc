// The parts of validated winners that need no runner: picking the
// candidates and naming figures. ValidateWinners itself runs in
// tune_command_test and model_job_test.
#include "local/validate_winners.h"

#include <memory>

#include "gtest/gtest.h"
#include "proto_convert/task_spec.h"

namespace tunefleet {
namespace {

class TopKResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ =
        TaskFromSpec(MakeTaskSpec("", "dense", {{"M", 64}, {"N", 64}, {"K", 64}}, "llvm")).value();
  }
  TrialResult Result(int64_t index, double cost, bool ok = true) const {
    TrialResult r{task_->space().Get(index).value(), {}};
    r.result.costs = {cost};
    if (!ok) r.result.error_no = MeasureErrorNo::kWrongAnswer;
    return r;
  }
  std::unique_ptr<Task> task_;
};

TEST_F(TopKResultsTest, CheapestDistinctSuccessfulConfigsFirst) {
  const std::vector<TrialResult> results = {
      Result(1, 3e-3), Result(2, 1e-3, /*ok=*/false),
      Result(3, 2e-3), Result(1, 0.5e-3),  // config 1 again, cheaper: competes with this result
      Result(4, 2e-3),                     // ties with config 3, which came first
      Result(5, 4e-3),
  };
  std::vector<TrialResult> top = TopKResults(results, 3, task_->space());
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].config.index(), 1);
  EXPECT_DOUBLE_EQ(top[0].result.MeanCost(), 0.5e-3);
  EXPECT_EQ(top[1].config.index(), 3);
  EXPECT_EQ(top[2].config.index(), 4);
  EXPECT_EQ(TopKResults(results, 10, task_->space()).size(), 4u);  // configs 1, 3, 4, 5
  EXPECT_TRUE(TopKResults(results, 0, task_->space()).empty());
  EXPECT_TRUE(TopKResults({Result(2, 1e-3, /*ok=*/false)}, 5, task_->space()).empty());
}

// A log written before tile_ow values that cut a row alike were declared
// one kernel can hold both: they take one candidate's place, not two.
TEST(TopKResultsKernelTest, ConfigsOfOneKernelAreOneCandidate) {
  auto task = TaskFromSpec(MakeTaskSpec("conv2d_nchwc.x86", "conv2d_nchw",
                                        {{"N", 1},
                                         {"C", 16},
                                         {"H", 14},
                                         {"W", 14},
                                         {"K", 16},
                                         {"R", 3},
                                         {"S", 3},
                                         {"padding", 1},
                                         {"layout", "NCHWc"}},
                                        "llvm"));
  ASSERT_TRUE(task.ok()) << task.status();
  auto with_ow = [&](int64_t tile_ow) {
    return (*task)->space().FromJson({{"entity",
                                       {{"tile_ic", "ot", 8},
                                        {"tile_oc", "ot", 16},
                                        {"tile_ow", "ot", tile_ow},
                                        {"vec", "ot", 8},
                                        {"reduce", "ot", "c_kh_kw_ic"}}}});
  };
  auto five = with_ow(5), six = with_ow(6), seven = with_ow(7);  // 5 and 6 cut 5 + 5 + 4
  ASSERT_TRUE(five.ok() && six.ok() && seven.ok());
  auto result = [](const Config& config, double cost) {
    TrialResult r{config, {}};
    r.result.costs = {cost};
    return r;
  };
  const std::vector<TrialResult> results = {result(*six, 2e-3), result(*five, 1e-3),
                                            result(*seven, 3e-3)};
  std::vector<TrialResult> top = TopKResults(results, 2, (*task)->space());
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].config.index(), five->index());  // the kernel's cheaper result
  EXPECT_EQ(top[1].config.index(), seven->index());
}

TEST(DescribeTest, NamesTheFigure) {
  Validation v;
  v.pass_costs = {1.0e-3, 1.1e-3, 0.9e-3};
  EXPECT_EQ(DescribeValidation(v), "median of 3 passes, spread 20.0 %");
  v.failed_passes = 1;
  EXPECT_EQ(DescribeValidation(v), "median of 3 passes, spread 20.0 %, 1 failed");
  Validation failed;
  failed.failed_passes = 2;
  EXPECT_EQ(DescribeValidation(failed), "no pass succeeded (2 failed)");

  Record record;
  record.result.costs = {1e-3};
  EXPECT_EQ(DescribeFigure(record), "search figure, not validated");
  record.validation = failed;
  EXPECT_EQ(DescribeFigure(record), "search figure, not validated");
  record.validation = v;
  EXPECT_EQ(DescribeFigure(record), "validated (median of 3 passes, spread 20.0 %, 1 failed)");
}

}  // namespace
}  // namespace tunefleet
