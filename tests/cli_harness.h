#pragma once
// Runs the built `layerplan` binary as a user would, for the command tests: its exit
// code, stdout and stderr, in a scratch directory of its own.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/scratch_dir.h"

namespace layerplan {
namespace testing_cli {

namespace fs = std::filesystem;
inline const std::string kBinary = std::string(LAYERPLAN_BINARY_DIR) + "/layerplan";

inline std::string data_file(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/" + name;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

inline std::string quote(const std::string& arg) {
  std::string out = "'";
  for (char ch : arg) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) result.push_back(line);
  return result;
}

struct Outcome {
  int exit_code = -1;  // -1: did not exit normally (killed by a signal)
  std::string out, err;
};

// Runs `layerplan ARGS...` in the working directory `cwd` and captures its exit code,
// stdout and stderr. The variables that name a job's GPUs or layerplan's files are removed
// from its environment and LAYERPLAN_CONFIG is none, so that an admin config installed on
// the machine (/etc/slurm/layerplan.toml) is not read; then `env` ("NAME=value" each) is
// added, so a test sees only what it sets ("LAYERPLAN_CONFIG=" gives the default path back).
inline Outcome run_in(const fs::path& cwd, const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {}) {
  ScratchDir dir;
  const fs::path out = dir.path() / "stdout", err = dir.path() / "stderr";
  std::string command =
      "cd " + quote(cwd.string()) +
      " && env -u CUDA_VISIBLE_DEVICES -u SLURM_STEP_GPUS -u SLURM_JOB_GPUS -u LAYERPLAN_TOPOLOGY_XML "
      "-u LAYERPLAN_NVML_LIBRARY -u LAYERPLAN_PLAN -u LAYERPLAN_PLAN_SHA256 -u LAYERPLAN_SYSFS_ROOT "
      "LAYERPLAN_CONFIG=none";
  for (const std::string& e : env) command += " " + quote(e);
  command += " " + quote(kBinary);
  for (const std::string& a : args) command += " " + quote(a);
  command += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  Outcome r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

// As run_in(), in the test's own working directory.
inline Outcome run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  return run_in(fs::current_path(), args, env);
}

inline std::string describe(const Outcome& r) {
  return "exit code " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;
}

inline bool has_line_starting(const Outcome& r, const std::string& prefix) {
  for (const std::string& line : lines_of(r.out)) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace testing_cli
}  // namespace layerplan
