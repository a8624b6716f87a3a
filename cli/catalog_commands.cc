#include "cli/catalog_commands.h"

#include <cstdio>
#include <iostream>

#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/zoo.h"
#include "topology/gpu_catalog.h"

namespace layerplan {

void add_models_command(CLI::App& cmd, ModelsCommandArgs& args) {
  cmd.add_option("--export", args.export_model,
                 "Print this zoo model, model file or ONNX file as a model file (docs/model-format.md)");
  cmd.add_option("--model", args.model, "List only this zoo model, model file or ONNX file");
}

int run_models_command(const ModelsCommandArgs& args) {
  if (args.export_model) {
    std::cout << model_to_json(resolve_model(*args.export_model, {}, 1));
    return 0;
  }
  std::printf("%-14s %8s %14s %12s\n", "model", "layers", "parameters", "GMAC/image");
  const std::vector<std::string> names = args.model ? std::vector<std::string>{*args.model} : zoo_model_names();
  for (const std::string& name : names) {
    const ModelGraph g = resolve_model(name, {}, 1);
    std::printf("%-14s %8d %14lld %12.3f\n", name.c_str(), g.size(), static_cast<long long>(parameter_count(g)),
                static_cast<double>(forward_macs(g)) / 1e9);
  }
  return 0;
}

void add_gpus_command(CLI::App& /*cmd*/, GpusCommandArgs& /*args*/) {}

int run_gpus_command(const GpusCommandArgs& /*args*/) {
  std::printf("%-6s %-22s %10s %10s %10s %10s %8s %12s\n", "name", "model", "FP32 TF/s", "TF32 TF/s", "BF16 TF/s",
              "mem GB/s", "mem GiB", "NVLink GB/s");
  for (const GpuModel& m : gpu_catalog()) {
    std::printf("%-6s %-22s %10.1f %10.1f %10.1f %10.0f %8.0f %12.0f\n", m.name.c_str(), m.full_name.c_str(),
                m.fp32_flops / 1e12, m.tf32_flops / 1e12, m.bf16_flops / 1e12, m.memory_bandwidth / 1e9,
                m.memory_bytes / (1024.0 * 1024.0 * 1024.0), m.nvlink_pair_bandwidth / 1e9);
  }
  return 0;
}

}  // namespace layerplan
