// A `layerplan` process that dies of a fatal signal says which, prints the call stack of the
// thread that got it, and still ends of that signal (cli/crash_report.h). The signals are
// sent with kill(1) to a training run, the way a crash would raise them. Sanitizer builds
// keep their own reports instead (the handlers are not installed there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "tests/cli_harness.h"

namespace layerplan {
namespace {

using namespace testing_cli;
using ::testing::HasSubstr;

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

struct Death {
  int status = -1;  // the shell's $?: 128 + the signal for a process it ended
  std::string err;
};

// Starts a long `layerplan train`, waits for its first logged step and sends it `signal`.
Death train_and_kill(const ScratchDir& dir, int signal) {
  const fs::path plan = dir.path() / "plan.json", log = dir.path() / "log.jsonl", err = dir.path() / "err.txt",
                 status = dir.path() / "status.txt";
  const Outcome planned = run({"plan", "--model", "lenet5", "--gpus", "1", "--batch", "8", "--json", plan.string()});
  EXPECT_EQ(planned.exit_code, 0) << describe(planned);
  // Minutes of steps: the run ends by the signal (or by `timeout`, and the test fails).
  const std::string train = quote(kBinary) + " train --plan " + quote(plan.string()) +
                            " --data synthetic --steps 1000000 --log-json " + quote(log.string()) + " 2>" +
                            quote(err.string());
  const std::string script = train + " & pid=$!; while [ ! -s " + quote(log.string()) +
                             " ]; do sleep 0.05; done; kill -" + std::to_string(signal) +
                             " $pid; wait $pid; echo $? >" + quote(status.string());
  EXPECT_EQ(std::system(("timeout 120 bash -c " + quote(script)).c_str()), 0);
  return {std::atoi(read_text(status).c_str()), read_text(err)};
}

TEST(CrashReport, ASegmentationFaultNamesTheSignalPrintsTheStackAndStillEndsTheProcess) {
  ScratchDir dir;
  const Death d = train_and_kill(dir, SIGSEGV);
  EXPECT_EQ(d.status, 128 + SIGSEGV) << d.err;
  EXPECT_THAT(d.err, HasSubstr("got SIGSEGV (invalid memory access); call stack")) << d.err;
  // The first frame is the handler's own, in the binary: "…/layerplan(+0x…)[0x…]".
  EXPECT_THAT(d.err, HasSubstr("/layerplan(+0x")) << d.err;
}

TEST(CrashReport, AnAbortAsGlibcsHeapChecksRaiseItIsReportedTheSameWay) {
  ScratchDir dir;
  const Death d = train_and_kill(dir, SIGABRT);
  EXPECT_EQ(d.status, 128 + SIGABRT) << d.err;
  EXPECT_THAT(d.err, HasSubstr("got SIGABRT")) << d.err;
  EXPECT_THAT(d.err, HasSubstr("/layerplan(+0x")) << d.err;
}

#endif

}  // namespace
}  // namespace layerplan
