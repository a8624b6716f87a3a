#include "cli/predict_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/kernels_option.h"
#include "cli/word_option.h"
#include "common/error.h"
#include "common/safe_write.h"
#include "model/plan_file.h"
#include "predict/communication_core.h"
#include "predict/link_figures.h"
#include "predict/measured_profile.h"
#include "predict/measurement.h"
#include "predict/step_prediction.h"
#include "predict/step_pricer.h"

namespace layerplan {

namespace {

MeasureOptions measure_options(const PredictCommandArgs& args) {
  MeasureOptions options;
  options.steps = args.steps;
  options.core_share = args.core_share;
  options.kernels = args.kernels;
  // Under `layerplan launch` every rank times its own device's tiles.
  options.mode = std::getenv("LAYERPLAN_RANK") != nullptr ? MeasureMode::kAsRanks : MeasureMode::kOneProcess;
  return options;
}

// --link FILE, or --link-gbytes and --link-latency-us.
LinkFigures link_figures(const PredictCommandArgs& args) {
  if (args.link) {
    require(!args.link_gbytes && !args.link_latency_us,
            "--link and --link-gbytes/--link-latency-us: expected one or the other");
    return read_link_figures(*args.link);
  }
  require(args.link_gbytes && args.link_latency_us,
          "--link-gbytes and --link-latency-us (or --link FILE): the link between ranks is needed");
  require(std::isfinite(*args.link_gbytes) && *args.link_gbytes > 0,
          "--link-gbytes " + std::to_string(*args.link_gbytes) + ": expected a positive bandwidth");
  require(std::isfinite(*args.link_latency_us) && *args.link_latency_us >= 0,
          "--link-latency-us " + std::to_string(*args.link_latency_us) + ": expected 0 or more");
  LinkFigures link;
  link.gbytes = *args.link_gbytes;
  link.latency_s = 1e-6 * *args.link_latency_us;
  return link;
}

// The outputs are written only once made; an existing file is kept until then.
void check_output_directory(const std::optional<std::string>& path, const std::string& option) {
  if (!path) return;
  const std::filesystem::path dir = std::filesystem::absolute(*path).parent_path();
  require(std::filesystem::is_directory(dir), option + " '" + *path + "': no directory " + dir.string());
  check_output_path(*path, option);
}

// -v: every layer's share, then the weight gradients' and the loss's.
void print_layers(const StepPrediction& p, const std::vector<Configuration>& plan) {
  std::printf("%-28s %-24s %11s %11s %9s\n", "layer", "configuration", "compute ms", "transfer ms", "sync ms");
  for (size_t id = 0; id < p.layers.size(); ++id) {
    const LayerPrediction& layer = p.layers[id];
    std::printf("%-28s %-24s %11.3f %11.3f %9.3f\n", layer.layer.c_str(), plan[id].str().c_str(), 1e3 * layer.compute_s,
                1e3 * layer.transfer_s, 1e3 * layer.sync_s);
  }
  std::printf("%-28s %-24s %11s %11s %9.3f\n", "weight gradients",
              (std::to_string(p.buckets) + " bucket" + (p.buckets == 1 ? "" : "s")).c_str(), "", "",
              1e3 * p.weight_sync_s);
  if (p.overlap) {
    std::printf("%-28s %-24s %11s %11s %9.3f\n", "  hidden by the backward", "(overlap on, not added)", "", "",
                1e3 * p.weight_sync_hidden_s);
  }
  std::printf("%-28s %-24s %11s %11s %9.3f\n", "loss", "", "", "", 1e3 * p.loss_sync_s);
}

// How the bucket all-reduces were priced, and why blocking where `--overlap on` asked for more.
std::string rings_priced(const StepPrediction& p, bool overlap, const CommunicationCore& core) {
  if (p.overlap) return "overlapping the backward";
  if (!overlap) return "blocking";
  return "blocking: --overlap on, but no core is spare for the communication thread (" + core.describe() +
         (core.core_share < 1.0 ? ", core share below 1" : "") + ")";
}

void print_summary(const StepPrediction& p, const std::string& model, const PlanFile& file,
                   const MeasureOptions& measure, const LinkFigures& link, const std::string& rings) {
  char core_share_text[64];
  std::snprintf(core_share_text, sizeof core_share_text, "one process, core share %.2f", measure.core_share);
  std::printf(
      "%s, batch %lld, %s plan on %d device%s: predicted step %.4f s = compute %.4f s + executor overhead "
      "%.4f s + data %.4f s (measured, median of %d steps, %s) + transfer %.4f s + sync %.4f s "
      "(priced: %.0f messages, link %.2f GB/s, bucket all-reduces %s)\n",
      model.c_str(), static_cast<long long>(file.batch), file.strategy.c_str(), file.devices,
      file.devices == 1 ? "" : "s", p.step_s, p.compute_s, p.overhead_s, p.data_s, measure.steps - 1,
      measure.mode == MeasureMode::kAsRanks ? "one rank per device" : core_share_text, p.transfer_s, p.sync_s,
      p.messages, link.gbytes, rings.c_str());
}

void write_json(const std::string& path, const StepPrediction& p, const std::string& model, const PlanFile& file,
                bool overlap, const CommunicationCore& core) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerPrediction& layer : p.layers) {
    layers.push_back({{"layer", layer.layer},
                      {"compute_s", layer.compute_s},
                      {"forward_s", layer.forward_s},
                      {"transfer_s", layer.transfer_s},
                      {"sync_s", layer.sync_s},
                      {"messages", layer.messages}});
  }
  const nlohmann::json doc{{"model", model},
                           {"batch", file.batch},
                           {"devices", file.devices},
                           {"strategy", file.strategy},
                           {"predicted_step_s", p.step_s},
                           {"compute_s", p.compute_s},
                           {"transfer_s", p.transfer_s},
                           {"sync_s", p.sync_s},
                           {"weight_sync_s", p.weight_sync_s},
                           {"weight_sync_hidden_s", p.weight_sync_hidden_s},
                           {"overlap", overlap},
                           {"overlap_priced_beside_backward", p.overlap},
                           {"cores", core.cores},
                           {"compute_threads", core.compute_threads},
                           {"loss_sync_s", p.loss_sync_s},
                           {"buckets", p.buckets},
                           {"messages", p.messages},
                           {"overhead_s", p.overhead_s},
                           {"data_s", p.data_s},
                           {"layers", layers}};
  write_file_safely(path, doc.dump(1) + "\n", "--json");
}

}  // namespace

void add_predict_command(CLI::App& cmd, PredictCommandArgs& args) {
  cmd.add_option("--plan", args.plan, "Plan file (default: $LAYERPLAN_PLAN)");
  cmd.add_option("--model", args.model, "Model the plan must be for (default: the plan's)");
  cmd.add_option("--model-path", args.model_path, "Folders searched for model files");
  cmd.add_option("--steps", args.steps, "Steps to time; the first warms up and is not counted")->capture_default_str();
  cmd.add_option("--core-share", args.core_share,
                 "Share of its cores each rank gets (cores / ranks when ranks outnumber cores)")
      ->capture_default_str();
  cmd.add_option("--link", args.link,
                 "The link between ranks as bench/gloo_link_bench --json measures it with the plan's rank "
                 "count: bandwidth, and each message's time by the compute before it");
  cmd.add_option("--link-gbytes", args.link_gbytes, "Instead of --link: GB/s one way between two ranks");
  cmd.add_option("--link-latency-us", args.link_latency_us,
                 "Instead of --link: the time of every message between two ranks, µs");
  add_kernels_option(cmd, args.kernels);
  cmd.add_option("--json", args.json, "Also write the prediction to this file");
  cmd.add_option("--profile-db-out", args.profile_db_out,
                 "Also write every layer's measured kernel times as a profile db (`layerplan plan --profile-db`)");
  cmd.add_flag("-v,--verbose", args.verbose, "Print every layer's share");
  add_word_option(&cmd, "--overlap", args.overlap, OptionWords<bool>{{"on", true}, {"off", false}},
                  "As `train --overlap`: on prices the gradient buckets' all-reduces running beside the backward "
                  "(only what is left after it adds to the step) where a core is spare for them (fewer compute "
                  "threads than cores), else as blocking; off, each one waited for where it is issued");
}

int run_predict_command(const PredictCommandArgs& args) {
  const PlanFile file = read_plan_file(args.plan);
  const ModelAndPlan loaded = model_and_plan(file, args.model, args.model_path);
  const MeasureOptions measure = measure_options(args);
  validate(measure);
  const LinkFigures link = link_figures(args);
  check_output_directory(args.json, "--json");
  check_output_directory(args.profile_db_out, "--profile-db-out");
  // The rings hide behind the backward only on a core no compute thread uses (predict/communication_core.h).
  const CommunicationCore core = this_process_communication_core(measure.core_share);
  const StepPricer pricer(loaded.graph, loaded.plan, file.devices, link, args.overlap && core.spare());
  const MeasuredSteps measured = measure_compute(loaded.graph, loaded.plan, file.devices, measure);
  if (!measured.reports) return 0;
  const StepPrediction prediction = pricer.price(measured);
  if (args.verbose) print_layers(prediction, loaded.plan);
  print_summary(prediction, loaded.graph.name(), file, measure, link, rings_priced(prediction, args.overlap, core));
  if (args.json) write_json(*args.json, prediction, loaded.graph.name(), file, args.overlap, core);
  if (args.profile_db_out) {
    const ProfileDb db = measured_profile(loaded.graph, loaded.plan, measured, measure);
    write_file_safely(*args.profile_db_out, profile_db_to_json(db), "--profile-db-out");
    std::printf("profile db written to %s (%zu layers, device \"%s\")\n", args.profile_db_out->c_str(),
                db.entries.size(), cpu_profile_device(measure.kernels).c_str());
  }
  return 0;
}

}  // namespace layerplan
