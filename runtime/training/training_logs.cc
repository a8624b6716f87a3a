#include "runtime/training/training_logs.h"

#include <array>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "common/error.h"

namespace layerplan {
namespace {

// The shortest text that reads back as the same double.
std::string number(double value) {
  std::array<char, 32> text{};
  const auto [end, error] = std::to_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() ? std::string(text.data(), end) : std::string("nan");
}

std::string csv_row(const std::array<std::string, 7>& fields) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) row += (i == 0 ? "" : ",") + fields[i];
  return row + "\n";
}

void check_file_in_existing_folder(const std::string& path, const std::string& flag) {
  const std::filesystem::path dir = std::filesystem::absolute(path).parent_path();
  require(std::filesystem::is_directory(dir), flag + " '" + path + "': no directory " + dir.string());
  check_output_path(path, flag);
}

}  // namespace

void check_training_log_paths(const TrainerOptions& options) {
  if (options.log_json) check_output_path(*options.log_json, "--log-json");
  if (options.log_csv) check_file_in_existing_folder(*options.log_csv, "--log-csv");
  if (options.tensorboard) {
    const std::string& dir = *options.tensorboard;
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    require(!error && std::filesystem::is_directory(dir), "--tensorboard '" + dir +
                                                              "': expected a folder that exists or can be made" +
                                                              (error ? ": " + error.message() : ""));
  }
}

TrainingLogs::TrainingLogs(const TrainerOptions& options) {
  if (options.log_json) json_ = std::make_unique<NewFile>(*options.log_json, "--log-json");
  if (options.log_csv) {
    csv_ = std::make_unique<NewFile>(*options.log_csv, "--log-csv");
    csv_->write(std::string(kTrainingCsvHeader) + "\n");
  }
  if (options.tensorboard) tensorboard_ = std::make_unique<TensorBoardEventFile>(*options.tensorboard, "--tensorboard");
  // The event file first: it is the one that refuses a name already taken.
  if (tensorboard_) tensorboard_->publish();
  if (json_) json_->publish();
  if (csv_) csv_->publish();
}

TrainingLogs::~TrainingLogs() = default;

void TrainingLogs::step(const StepRecord& r) {
  if (json_) {
    const nlohmann::json line = {
        {"step", r.step}, {"epoch", r.epoch}, {"loss", r.loss}, {"lr", r.lr}, {"images_per_s", r.images_per_s}};
    json_->write(line.dump() + "\n");
  }
  if (csv_) {
    csv_->write(csv_row({std::to_string(r.step), std::to_string(r.epoch), number(r.loss), number(r.lr),
                         number(r.images_per_s), "", ""}));
  }
  if (tensorboard_) {
    tensorboard_->write_scalars(r.step, {{"train/loss", static_cast<float>(r.loss)},
                                         {"train/lr", static_cast<float>(r.lr)},
                                         {"train/images_per_s", static_cast<float>(r.images_per_s)},
                                         {"train/epoch", static_cast<float>(r.epoch)}});
  }
}

void TrainingLogs::evaluated(const TestEvaluation& e) {
  if (json_) {
    nlohmann::json line = {{"step", e.step}, {"epoch", e.epoch}, {"test_accuracy", e.accuracy}, {"test_loss", e.loss}};
    if (e.top5_accuracy >= 0) line["test_top5_accuracy"] = e.top5_accuracy;  // 5 classes or more
    json_->write(line.dump() + "\n");
  }
  if (csv_) {
    csv_->write(
        csv_row({std::to_string(e.step), std::to_string(e.epoch), "", "", "", number(e.loss), number(e.accuracy)}));
  }
  if (tensorboard_) {
    std::vector<ScalarValue> scalars = {{"test/loss", static_cast<float>(e.loss)},
                                        {"test/accuracy", static_cast<float>(e.accuracy)}};
    if (e.top5_accuracy >= 0) scalars.push_back({"test/top5_accuracy", static_cast<float>(e.top5_accuracy)});
    tensorboard_->write_scalars(e.step, scalars);
  }
}

}  // namespace layerplan
