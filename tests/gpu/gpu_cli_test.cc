// `--backend gpu` and `--precision` of `layerplan train` and `layerplan launch` on a machine
// whose GPUs are hidden (CUDA_VISIBLE_DEVICES=''), as CI runs them: one line naming what was
// found and what was needed, exit 2, nothing on stdout. Without the GPU backend built in,
// the line says so instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli_harness.h"

namespace layerplan::testing_cli {
namespace {

using ::testing::HasSubstr;

#ifdef LAYERPLAN_HAVE_CUDA
std::string no_gpus(int needed) {
  return "this run needs " + std::to_string(needed) + (needed == 1 ? " GPU" : " GPUs") + ", found 0: ";
}
#else
std::string no_gpus(int /*needed*/) { return "--backend gpu: this layerplan is built without the GPU backend"; }
#endif

void expect_one_line_exit_2(const Outcome& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(message)) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
}

TEST(GpuCli, HiddenGpusRefuseTrainAndLaunchInOneLine) {
  ScratchDir dir;
  const std::string plan = (dir.path() / "lenet.json").string();
  const Outcome made =
      run({"plan", "--model", "lenet5", "--batch", "8", "--gpus", "1", "--gpus-per-node", "1", "--json", plan});
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  const std::vector<std::string> hidden = {"CUDA_VISIBLE_DEVICES="};
  expect_one_line_exit_2(run({"train", "--plan", plan, "--backend", "gpu"}, hidden), no_gpus(1));
  // The backend `layerplan launch` gives its ranks.
  expect_one_line_exit_2(run({"train", "--plan", plan}, {"CUDA_VISIBLE_DEVICES=", "LAYERPLAN_BACKEND=gpu"}),
                         no_gpus(1));
  // Rank k uses the k-th visible GPU: launch refuses before any rank starts.
  expect_one_line_exit_2(run({"launch", "--backend", "gpu", "--nproc", "2", "--", "true"}, hidden), no_gpus(2));
#ifdef LAYERPLAN_HAVE_CUDA
  const Outcome r = run({"train", "--plan", plan, "--backend", "gpu"}, hidden);
  EXPECT_THAT(r.err, HasSubstr("CUDA_VISIBLE_DEVICES=''"));
#endif
}

TEST(GpuCli, BackendAndPrecisionWordsAreChecked) {
  ScratchDir dir;
  const std::string plan = (dir.path() / "lenet.json").string();
  ASSERT_EQ(run({"plan", "--model", "lenet5", "--batch", "8", "--gpus", "1", "--gpus-per-node", "1", "--json", plan})
                .exit_code,
            0);
  expect_one_line_exit_2(run({"train", "--plan", plan, "--backend", "tpu"}), "--backend: 'tpu': expected cpu or gpu");
  expect_one_line_exit_2(run({"train", "--plan", plan, "--precision", "fp16"}),
                         "--precision: 'fp16': expected fp32, tf32 or bf16");
  expect_one_line_exit_2(run({"train", "--plan", plan, "--precision", "tf32"}),
                         "--precision tf32: expected fp32 with --backend cpu");
  expect_one_line_exit_2(run({"train", "--plan", plan}, {"LAYERPLAN_BACKEND=opencl"}),
                         "LAYERPLAN_BACKEND='opencl': expected cpu or gpu");
  expect_one_line_exit_2(run({"launch", "--backend", "tpu", "--", "true"}), "--backend: 'tpu': expected cpu or gpu");
}

}  // namespace
}  // namespace layerplan::testing_cli
