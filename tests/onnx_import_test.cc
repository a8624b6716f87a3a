// ONNX models (model/onnx_model.h, docs/model-format.md "ONNX models"): the test files of
// tests/onnx_data/ (written by make_onnx_files.py there) read into the layers they
// describe, with their initial weights; ResNet-50 as PyTorch exports it equals the
// built-in one; every refusal is one line naming what is wrong.
#include "model/onnx_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/zoo.h"
#include "planner/planner.h"
#include "runtime/safetensors.h"
#include "tests/cli_harness.h"
#include "tests/scratch_dir.h"
#include "topology/cluster_spec.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string onnx_path(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/onnx_data/" + name;
}

std::string onnx_bytes(const std::string& name) { return read_input_file(onnx_path(name), name, kMaxOnnxFileBytes); }

ModelGraph read_onnx(const std::string& name, int64_t batch) {
  return model_from_onnx(onnx_bytes(name), batch, name, name);
}

// The pattern make_onnx_files.py fills every initializer with.
float weight_value(int64_t i) { return static_cast<float>((i * 7) % 13 - 6) / 16.0F; }

std::string window_text(const Window& w) {
  return std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) + "/" + std::to_string(w.stride_h) + "," +
         std::to_string(w.stride_w) + "/" + std::to_string(w.pad_h) + "," + std::to_string(w.pad_w);
}

std::string kinds(const ModelGraph& g) {
  std::string out;
  for (const Layer& l : g.layers()) out += std::string(out.empty() ? "" : " ") + std::string(kind_name(l.kind));
  return out;
}

TEST(OnnxImport, EverySupportedOperatorBecomesItsLayer) {
  const ModelGraph g = read_onnx("tiny.onnx", 8);
  // Identity and the 1x1 average pool are identities; the Constant nodes feed Dropout.
  EXPECT_EQ(kinds(g),
            "input conv2d batch_norm relu max_pool conv2d conv2d relu concat conv2d batch_norm add relu avg_pool "
            "global_avg_pool flatten dropout fully_connected relu fully_connected softmax_cross_entropy");
  EXPECT_EQ(g.name(), "tiny.onnx");
  EXPECT_EQ(g.layer(0).output, (Shape{{8, 3, 8, 8}}));  // the symbolic batch takes the plan's
  EXPECT_EQ(g.layer(1).name, "conv1");                  // named after conv1.weight
  EXPECT_EQ(window_text(g.layer(1).window), "3x3/1,1/1,1");
  EXPECT_FALSE(g.layer(1).has_bias);
  EXPECT_EQ(g.layer(2).name, "bn1");
  EXPECT_EQ(g.layer(3).name, "/relu/Relu");  // no weight: the node's name
  EXPECT_EQ(g.layer(4).output, (Shape{{8, 4, 4, 4}}));
  EXPECT_TRUE(g.layer(5).has_bias);
  EXPECT_EQ(g.layer(8).inputs, (std::vector<int>{5, 7}));    // concat of both branches
  EXPECT_EQ(g.layer(11).inputs, (std::vector<int>{10, 8}));  // the residual add
  EXPECT_EQ(window_text(g.layer(13).window), "3x3/1,1/1,1");
  EXPECT_EQ(g.layer(17).name, "fc1");
  EXPECT_EQ(g.layer(17).output, (Shape{{8, 6, 1, 1}}));
  EXPECT_EQ(g.layer(19).inputs, (std::vector<int>{18}));  // through the Identity
  EXPECT_EQ(g.layer(20).name, "loss");                    // logits out: the loss is added
}

// Activations by their function's name.
std::string kinds_and_activations(const ModelGraph& g) {
  std::string out;
  for (const Layer& l : g.layers()) {
    const std::string_view kind = l.kind == LayerKind::kActivation ? activation_name(l.activation) : kind_name(l.kind);
    out += std::string(out.empty() ? "" : " ") + std::string(kind);
  }
  return out;
}

TEST(OnnxImport, MobileNetOperatorsBecomeActivationAndMulLayers) {
  const ModelGraph g = read_onnx("mobilenet.onnx", 2);
  EXPECT_EQ(kinds_and_activations(g),
            "input conv2d batch_norm hardswish global_avg_pool conv2d relu conv2d hardsigmoid mul clip conv2d silu "
            "sigmoid mul clip global_avg_pool flatten dropout fully_connected softmax_cross_entropy");
  // Batch norm's attributes as PyTorch set them (ONNX's momentum 0.99 is PyTorch's 0.01).
  EXPECT_EQ(g.layer(2).epsilon, 1e-3);
  EXPECT_EQ(g.layer(2).momentum, 0.01);
  // PyTorch's Hardsigmoid: alpha 1/6 exactly, beta 1/2.
  EXPECT_EQ(g.layer(8).alpha, kHardSigmoidAlpha);
  EXPECT_EQ(g.layer(8).beta, 0.5);
  // The squeeze-and-excitation Mul: the block's output times the (N, C, 1, 1) scale, whichever
  // order the file has them in.
  EXPECT_EQ(g.layer(9).inputs, (std::vector<int>{3, 8}));
  EXPECT_EQ(g.input_shape(g.layer(9), 1), (Shape{{2, 8, 1, 1}}));
  // ReLU6 is Clip(0, 6) from Constant nodes.
  EXPECT_EQ(g.layer(10).alpha, 0.0);
  EXPECT_EQ(g.layer(10).beta, 6.0);
  // Mul(y, Sigmoid(y)) is one SiLU layer named after the Mul; a Sigmoid multiplying
  // something else stays a sigmoid and a mul.
  EXPECT_EQ(g.layer(12).name, "/silu/Mul");
  EXPECT_EQ(g.layer(12).inputs, (std::vector<int>{11}));
  EXPECT_EQ(g.layer(13).inputs, (std::vector<int>{11}));
  EXPECT_EQ(g.layer(14).inputs, (std::vector<int>{12, 13}));
  // A Clip with only a max is unbounded below.
  EXPECT_EQ(g.layer(15).alpha, -std::numeric_limits<float>::max());
  EXPECT_EQ(g.layer(15).beta, 2.5);
  EXPECT_EQ(g.layer(18).dropout_ratio, 0.2);
  // The other files keep PyTorch's defaults.
  const ModelGraph tiny = read_onnx("tiny.onnx", 2);
  EXPECT_EQ(tiny.layer(2).epsilon, 1e-5);
  EXPECT_EQ(tiny.layer(2).momentum, 0.1);
  EXPECT_EQ(tiny.layer(16).dropout_ratio, 0.5);
  // It plans, and its model file reads back as the same layers.
  EXPECT_EQ(kinds_and_activations(model_from_json(model_to_json(g), 2, "back.json")), kinds_and_activations(g));
}

TEST(OnnxImport, ASoftmaxOutputIsTheLossAndOpset17Reads) {
  const ModelGraph g = read_onnx("tiny_softmax.onnx", 3);
  EXPECT_EQ(kinds(g), kinds(read_onnx("tiny.onnx", 3)));
  EXPECT_EQ(g.layers().back().name, "/LogSoftmax");
}

TEST(OnnxImport, NodesOutOfOrderAreSorted) {
  const ModelGraph sorted = read_onnx("tiny.onnx", 4);
  const ModelGraph unsorted = read_onnx("tiny_unsorted.onnx", 4);
  ASSERT_EQ(unsorted.size(), sorted.size());
  for (int i = 0; i < sorted.size(); ++i) {
    EXPECT_EQ(unsorted.layer(i).kind, sorted.layer(i).kind) << i;
    EXPECT_EQ(unsorted.layer(i).output, sorted.layer(i).output) << i;
  }
}

// PyTorch exports avg_pool2d(3, 1, padding=1) (count_include_pad) as Pad + AveragePool:
// the zeros of a Pad node become the padding of the pool or convolution that reads them.
TEST(OnnxImport, ZeroPadNodesBecomeTheWindowsPadding) {
  const ModelGraph g = read_onnx("tiny_pad.onnx", 2);
  EXPECT_EQ(kinds(g), "input avg_pool conv2d flatten fully_connected softmax_cross_entropy");
  EXPECT_EQ(window_text(g.layer(1).window), "3x3/1,1/1,1");
  EXPECT_EQ(g.layer(1).output, (Shape{{2, 3, 8, 8}}));
  EXPECT_EQ(window_text(g.layer(2).window), "3x3/1,1/2,1");
  EXPECT_EQ(g.layer(2).output, (Shape{{2, 4, 10, 8}}));
}

TEST(OnnxImport, FoldedBatchNormPlansAsTheModelItIs) {
  // An eval-mode export: batch norm folded into the convolution's weights and bias.
  const ModelGraph g = read_onnx("tiny_folded.onnx", 4);
  EXPECT_EQ(kinds(g), "input conv2d relu global_avg_pool flatten fully_connected softmax_cross_entropy");
  EXPECT_EQ(g.layer(0).output.n(), 4);  // a batch of 1 in the file takes the plan's
  EXPECT_EQ(g.layer(1).name, "/conv1/Conv");
  EXPECT_TRUE(g.layer(1).has_bias);
  const auto weights = onnx_initial_weights(onnx_bytes("tiny_folded.onnx"), "tiny_folded.onnx");
  ASSERT_TRUE(weights.count("/conv1/Conv.weight"));  // layerplan's names for onnx::Conv_21
  EXPECT_EQ(weights.at("/conv1/Conv.bias").shape, (std::vector<int64_t>{4}));
}

// GoogLeNet's and SqueezeNet's pools round their output size up; an AveragePool's
// count_include_pad 0 leaves padding out of the divisor.
TEST(OnnxImport, CeilModeAndExcludedPaddingAreTheWindowsOwn) {
  const ModelGraph g = read_onnx("tiny_pool_modes.onnx", 2);
  EXPECT_EQ(kinds(g), "input conv2d max_pool avg_pool avg_pool flatten fully_connected softmax_cross_entropy");
  EXPECT_EQ(g.layer(2).output, (Shape{{2, 4, 4, 5}}));  // 8x10 by 3/2: 3x4 rounding down
  EXPECT_TRUE(g.layer(2).window.ceil_mode);
  EXPECT_TRUE(g.layer(2).window.count_include_pad);
  EXPECT_EQ(g.layer(3).output, (Shape{{2, 4, 3, 3}}));
  EXPECT_TRUE(g.layer(3).window.ceil_mode);
  EXPECT_TRUE(g.layer(3).window.count_include_pad);
  EXPECT_FALSE(g.layer(4).window.ceil_mode);
  EXPECT_FALSE(g.layer(4).window.count_include_pad);
  // The JSON model format keeps both fields.
  const ModelGraph back = model_from_json(model_to_json(g), 2, "exported");
  for (int id : {2, 3, 4}) {
    EXPECT_EQ(back.layer(id).window.ceil_mode, g.layer(id).window.ceil_mode) << id;
    EXPECT_EQ(back.layer(id).window.count_include_pad, g.layer(id).window.count_include_pad) << id;
    EXPECT_EQ(back.layer(id).output, g.layer(id).output) << id;
  }
}

// Gemm with transB 0 and MatMul by a constant are fully connected layers whose weights
// load in PyTorch's [out, in] layout; a Reshape to (N, C*H*W) is a flatten.
TEST(OnnxImport, GemmMatMulAndReshapeThatFlattensAreFullyConnectedLayers) {
  const ModelGraph g = read_onnx("tiny_linear.onnx", 3);
  EXPECT_EQ(kinds(g),
            "input conv2d flatten fully_connected relu fully_connected relu fully_connected "
            "softmax_cross_entropy");
  EXPECT_EQ(g.layer(2).output, (Shape{{3, 32, 1, 1}}));
  EXPECT_EQ(g.layer(3).name, "fc1");
  EXPECT_TRUE(g.layer(3).has_bias);
  EXPECT_EQ(g.layer(5).name, "fc2");  // MatMul(x, Transpose(fc2.weight)) + Add(fc2.bias)
  EXPECT_TRUE(g.layer(5).has_bias);
  EXPECT_EQ(g.layer(6).inputs, (std::vector<int>{5}));  // the Relu reads the Add's output
  EXPECT_EQ(g.layer(7).name, "/fc3/MatMul");            // a generated weight name: the node's
  EXPECT_FALSE(g.layer(7).has_bias);
  EXPECT_EQ(g.layer(7).output, (Shape{{3, 4, 1, 1}}));

  const auto weights = onnx_initial_weights(onnx_bytes("tiny_linear.onnx"), "tiny_linear.onnx");
  // fc1.weight is [32, 6] in the file (x·W): [6, 32] transposed, as torch.nn.Linear holds it.
  const OnnxTensor& fc1 = weights.at("fc1.weight");
  ASSERT_EQ(fc1.shape, (std::vector<int64_t>{6, 32}));
  for (int64_t o = 0; o < 6; ++o) {
    for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(fc1.values[static_cast<size_t>(o * 32 + i)], weight_value(i * 6 + o));
  }
  // fc2.weight is [5, 6] already; the Transpose node undoes nothing in the file.
  const OnnxTensor& fc2 = weights.at("fc2.weight");
  ASSERT_EQ(fc2.shape, (std::vector<int64_t>{5, 6}));
  for (size_t i = 0; i < fc2.values.size(); ++i) EXPECT_EQ(fc2.values[i], weight_value(static_cast<int64_t>(i)));
  EXPECT_EQ(weights.at("fc2.bias").shape, (std::vector<int64_t>{5}));
  const OnnxTensor& fc3 = weights.at("/fc3/MatMul.weight");
  ASSERT_EQ(fc3.shape, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(fc3.values[1], weight_value(4));  // [0][1] of PyTorch's layout is [1][0] of the file's
  EXPECT_FALSE(weights.count("/fc3/MatMul.bias"));
}

// x.view(x.size(0), -1): the shape computed from the input's own (Shape, Gather, Unsqueeze,
// Concat) keeps the batch, so the Reshape flattens.
TEST(OnnxImport, AViewOfTheBatchSizeIsAFlatten) {
  const ModelGraph g = read_onnx("tiny_view.onnx", 3);
  EXPECT_EQ(kinds(g), "input conv2d flatten fully_connected softmax_cross_entropy");
  EXPECT_EQ(g.layer(2).output, (Shape{{3, 32, 1, 1}}));
  EXPECT_EQ(g.layer(2).name, "/Reshape");
}

TEST(OnnxImport, InitializersAreTheInitialWeightsUnderTheirOwnNames) {
  const auto weights = onnx_initial_weights(onnx_bytes("tiny.onnx"), "tiny.onnx");
  std::vector<std::string> names;
  for (const auto& [name, tensor] : weights) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"block.bn.bias", "block.bn.running_mean", "block.bn.running_var",
                                             "block.bn.weight", "block.conv.weight", "bn1.bias", "bn1.running_mean",
                                             "bn1.running_var", "bn1.weight", "branch_a.bias", "branch_a.weight",
                                             "branch_b.bias", "branch_b.weight", "conv1.weight", "fc1.bias",
                                             "fc1.weight", "fc2.bias", "fc2.weight"}));
  const OnnxTensor& conv = weights.at("conv1.weight");
  EXPECT_EQ(conv.shape, (std::vector<int64_t>{4, 3, 3, 3}));
  ASSERT_EQ(conv.values.size(), 108U);
  for (size_t i = 0; i < conv.values.size(); ++i) EXPECT_EQ(conv.values[i], weight_value(static_cast<int64_t>(i)));
  EXPECT_EQ(weights.at("fc2.weight").shape, (std::vector<int64_t>{5, 6}));
}

TEST(OnnxImport, WeightsWithoutValuesPlanButDoNotInitialize) {
  EXPECT_THAT([] { onnx_initial_weights(onnx_bytes("resnet50.onnx"), "resnet50.onnx"); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("is a graph input without values")));
}

// The ResNet-50 PyTorch exports equals the built-in resnet50: the same layers in the same
// order, shapes, windows and connections, so the same parameters, MACs and plan.
TEST(OnnxImport, ResNet50EqualsTheBuiltInOne) {
  const ModelGraph onnx = read_onnx("resnet50.onnx", 32);
  const ModelGraph zoo = resnet50(32);
  ASSERT_EQ(onnx.size(), zoo.size());
  for (int i = 0; i < zoo.size(); ++i) {
    const Layer& a = onnx.layer(i);
    const Layer& b = zoo.layer(i);
    EXPECT_EQ(a.kind, b.kind) << b.name;
    EXPECT_EQ(a.inputs, b.inputs) << b.name;
    EXPECT_EQ(a.output, b.output) << b.name;
    EXPECT_EQ(a.has_bias, b.has_bias) << b.name;
    EXPECT_EQ(window_text(a.window), window_text(b.window)) << b.name;
  }
  EXPECT_EQ(onnx.layer(5).name, "layer1.0.conv1");          // torchvision's module paths
  EXPECT_EQ(onnx.layer(13).name, "layer1.0.downsample.0");  // the built-in's layer1.0.downsample.conv
  EXPECT_EQ(parameter_count(onnx), parameter_count(zoo));
  EXPECT_EQ(forward_macs(onnx), forward_macs(zoo));

  ClusterSpec spec = ClusterSpec::paper_cluster();
  spec.nodes = 1;
  spec.gpus_per_node = 4;
  const DeviceGraph devices = build_device_graph(spec);
  const Plan a = make_plan(onnx, devices);
  const Plan b = make_plan(zoo, devices);
  ASSERT_EQ(a.chosen.layers.size(), b.chosen.layers.size());
  for (size_t i = 0; i < b.chosen.layers.size(); ++i) {
    EXPECT_EQ(a.chosen.layers[i].config, b.chosen.layers[i].config) << zoo.layer(static_cast<int>(i)).name;
  }
  EXPECT_DOUBLE_EQ(a.chosen.step_s(), b.chosen.step_s());
}

struct Refusal {
  std::string file;
  std::string message;
};

class OnnxRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(OnnxRefusal, IsOneLineNamingWhatIsWrong) {
  const Refusal& r = GetParam();
  try {
    read_onnx(r.file, 8);
    FAIL() << r.file << " was read";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr(r.message));
    EXPECT_THAT(what, ::testing::StartsWith(r.file + ": "));
    EXPECT_THAT(what, Not(HasSubstr("\n")));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, OnnxRefusal,
    ::testing::Values(
        Refusal{"bad_opset12.onnx", "opset 12: expected 13 to 18"},
        Refusal{"bad_fixed_batch.onnx",
                "input 'input': batch dimension 3: expected a symbolic batch, 1 or the batch 8"},
        Refusal{"bad_dynamic_hw.onnx", "input 'input': height 'height': expected a fixed size"},
        Refusal{"bad_init_shape.onnx",
                "node 0 '/conv/Conv' (Conv): initializer 'w.weight' has shape 4x2x3x3, "
                "expected 4x3x3x3"},
        Refusal{"bad_cycle.onnx", "the graph has a cycle through node 0 '/relu/Relu' (Relu)"},
        Refusal{"bad_cycle_downstream.onnx", "the graph has a cycle through node 1 '/loop_b' (Relu)"},
        Refusal{"bad_group.onnx",
                "node 0 '/conv/Conv' (Conv): group 2: expected a divisor of the input channels (3) and of the "
                "filters (4)"},
        Refusal{"bad_tanh.onnx", "node 0 '/tanh/Tanh' (Tanh): operator Tanh is not supported"},
        Refusal{"bad_mul_shape.onnx",
                "node 1 '/mul/Mul' (Mul): mul /mul/Mul: input /maxpool/MaxPool is 8x3x1x8, expected 8x3x8x8 or "
                "8x3x1x1"},
        Refusal{"bad_clip_computed.onnx", "node 1 '/clip/Clip' (Clip): input 1 '/relu/Relu_output_0' is computed"},
        Refusal{"bad_asymmetric_pads.onnx", "node 0 '/conv/Conv' (Conv): asymmetric pads"},
        Refusal{"bad_dilation.onnx", "(Conv): dilations other than 1"},
        Refusal{"bad_gemm_alpha.onnx", "node 1 '/gemm/Gemm' (Gemm): alpha 0.5, beta 1: expected 1 and 1"},
        Refusal{"bad_reshape.onnx",
                "node 1 '/reshape/Reshape' (Reshape): shape (-1, 96) of a 8x3x8x8 input: only a flatten"},
        Refusal{"bad_view.onnx", "'/Reshape' (Reshape): shape (N, 3, -1) of a 8x3x8x8 input: only a flatten"},
        Refusal{"bad_transpose.onnx", "node 0 '/transpose/Transpose' (Transpose): input 0 is an activation"},
        // Refused before ONNX's shape inference, which would only say its input is not of rank 3.
        Refusal{"bad_lstm.onnx", "node 0 '/lstm/LSTM' (LSTM): operator LSTM is not supported"},
        Refusal{"bad_checker.onnx", "not a valid ONNX model: "},  // libonnx's checker: Conv without weights
        Refusal{"bad_pad_max_pool.onnx", "(MaxPool): input 0 '/pool/Pad_output_0' is zero-padded by a Pad node"},
        Refusal{"bad_output_rank.onnx", "has rank 4: expected the logits"},
        Refusal{"bad_external_data.onnx", "initializer 'w.weight' keeps its data in an external file"},
        // Found by fuzz_onnx_file: a Conv stride of 0 killed libonnx's shape inference (SIGFPE).
        Refusal{"bad_zero_stride.onnx",
                "'/conv1/Conv' (Conv): attribute strides has a value below 1: expected 1 or more"}),
    [](const ::testing::TestParamInfo<Refusal>& param) {
      std::string name = param.param.file.substr(4, param.param.file.size() - 9);
      for (char& c : name) c = c == '.' ? '_' : c;
      return name;
    });

TEST(OnnxImport, TruncatedOrNonOnnxBytesAreRefused) {
  const std::string tiny = onnx_bytes("tiny.onnx");
  for (const size_t keep : {size_t{0}, size_t{1}, tiny.size() / 3, tiny.size() - 1}) {
    EXPECT_THAT([&] { model_from_onnx(tiny.substr(0, keep), 8, "t.onnx", "t.onnx"); },
                ::testing::ThrowsMessage<UsageError>(HasSubstr("t.onnx: not an ONNX model")))
        << keep;
  }
  EXPECT_THAT([] { model_from_onnx(model_to_json(resnet50(1)), 8, "m.onnx", "m.onnx"); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("m.onnx: not an ONNX model")));
}

TEST(OnnxImport, ResolveModelFindsOnnxFilesByPathAndInTheModelPath) {
  EXPECT_EQ(resolve_model(onnx_path("tiny.onnx"), {}, 2).name(), "tiny.onnx");
  const std::string dir = std::string(LAYERPLAN_SOURCE_DIR) + "/tests/onnx_data";
  EXPECT_EQ(resolve_model("tiny", {dir}, 2).name(), "tiny.onnx");       // DIR/tiny.onnx
  EXPECT_EQ(resolve_model("tiny.onnx", {dir}, 2).name(), "tiny.onnx");  // DIR/tiny.onnx
  EXPECT_THAT([&] { resolve_model("bad_tanh", {dir}, 2); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("operator Tanh is not supported")));
}

// The command line: plan, export and train with an ONNX file; a bad one is one line on
// stderr, exit 2, and no plan file.
TEST(OnnxCommands, PlanExportAndTrainFromTheInitializers) {
  ScratchDir dir;
  const std::string plan = (dir.path() / "plan.json").string();
  const testing_cli::Outcome planned =
      testing_cli::run({"plan", "--model", onnx_path("tiny.onnx"), "--batch", "4", "--gpus", "1", "--json", plan});
  ASSERT_EQ(planned.exit_code, 0) << testing_cli::describe(planned);
  const testing_cli::Outcome exported = testing_cli::run({"models", "--export", onnx_path("tiny.onnx")});
  ASSERT_EQ(exported.exit_code, 0) << testing_cli::describe(exported);
  EXPECT_EQ(model_from_json(exported.out, 4, "exported").size(), read_onnx("tiny.onnx", 4).size());

  // With a learning rate of 1e-20 the saved weights are the ONNX file's, to float precision.
  const std::string saved = (dir.path() / "ck.safetensors").string();
  const testing_cli::Outcome trained =
      testing_cli::run({"train", "--plan", plan, "--model", onnx_path("tiny.onnx"), "--steps", "1", "--lr", "1e-20",
                        "--momentum", "0", "--init-from", onnx_path("tiny.onnx"), "--save", saved});
  ASSERT_EQ(trained.exit_code, 0) << testing_cli::describe(trained);
  const safetensors::Reader checkpoint(saved);
  for (const std::string name : {"conv1.weight", "bn1.weight", "fc2.weight", "fc2.bias"}) {
    const std::vector<float> values = checkpoint.read(name).floats();  // PyTorch's state_dict names
    ASSERT_FALSE(values.empty()) << name;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR(values[i], weight_value(static_cast<int64_t>(i)), 1e-12) << name;
    }
  }
}

// Depthwise (group 8) and grouped (group 2) convolutions: their layers keep the group
// count, weights (out, in/group, kh, kw) initialize them and are saved in that shape.
TEST(OnnxCommands, GroupedConvolutionsPlanAndTrainFromTheInitializers) {
  const ModelGraph g = read_onnx("grouped_conv.onnx", 4);
  EXPECT_EQ(kinds(g),
            "input conv2d batch_norm relu conv2d batch_norm relu conv2d global_avg_pool flatten fully_connected "
            "softmax_cross_entropy");
  EXPECT_EQ(g.layer(4).name, "features.2");
  EXPECT_EQ(g.layer(4).groups, 8);
  EXPECT_EQ(g.layer(7).groups, 2);
  EXPECT_EQ(g.layer(7).output, (Shape{{4, 6, 4, 4}}));
  EXPECT_EQ(parameter_count(g, g.layer(4)), 8 * 1 * 9);
  EXPECT_EQ(parameter_count(g, g.layer(7)), 6 * 4 * 9 + 6);
  ScratchDir dir;
  const std::string plan = (dir.path() / "plan.json").string();
  const std::string model = onnx_path("grouped_conv.onnx");
  const testing_cli::Outcome planned =
      testing_cli::run({"plan", "--model", model, "--batch", "4", "--gpus", "1", "--json", plan});
  ASSERT_EQ(planned.exit_code, 0) << testing_cli::describe(planned);
  const std::string saved = (dir.path() / "ck.safetensors").string();
  const testing_cli::Outcome trained =
      testing_cli::run({"train", "--plan", plan, "--model", model, "--steps", "1", "--lr", "1e-20", "--momentum", "0",
                        "--init-from", model, "--save", saved});
  ASSERT_EQ(trained.exit_code, 0) << testing_cli::describe(trained);
  const safetensors::Reader checkpoint(saved);
  EXPECT_EQ(checkpoint.read("features.2.weight").shape, (std::vector<int64_t>{8, 1, 3, 3}));
  EXPECT_EQ(checkpoint.read("features.4.weight").shape, (std::vector<int64_t>{6, 4, 3, 3}));
  const std::vector<float> values = checkpoint.read("features.4.weight").floats();
  ASSERT_EQ(values.size(), 216U);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(values[i], weight_value(static_cast<int64_t>(i)), 1e-12);
}

// An eval-mode export, batch norm folded into the convolution: it trains as the model it
// is, from its initializers (whose generated names its layers' names replace).
TEST(OnnxCommands, FoldedBatchNormTrainsFromItsInitializers) {
  ScratchDir dir;
  const std::string plan = (dir.path() / "plan.json").string();
  const std::string model = onnx_path("tiny_folded.onnx");
  const testing_cli::Outcome planned =
      testing_cli::run({"plan", "--model", model, "--batch", "4", "--gpus", "1", "--json", plan});
  ASSERT_EQ(planned.exit_code, 0) << testing_cli::describe(planned);
  const std::string saved = (dir.path() / "ck.safetensors").string();
  const testing_cli::Outcome trained = testing_cli::run(
      {"train", "--plan", plan, "--model", model, "--steps", "2", "--init-from", model, "--save", saved});
  ASSERT_EQ(trained.exit_code, 0) << testing_cli::describe(trained);
  const safetensors::Reader checkpoint(saved);
  EXPECT_EQ(checkpoint.read("/conv1/Conv.bias").floats().size(), 4U);
}

// Weights the file holds as [in, out] (Gemm transB 0, MatMul) train, and are saved in
// PyTorch's [out, in] under their names; the pools in ceil_mode plan and train alike.
TEST(OnnxCommands, TransposedWeightsAndCeilPoolsTrainFromTheInitializers) {
  ScratchDir dir;
  for (const std::string name : {"tiny_linear.onnx", "tiny_pool_modes.onnx"}) {
    const std::string plan = (dir.path() / (name + ".plan.json")).string();
    const testing_cli::Outcome planned =
        testing_cli::run({"plan", "--model", onnx_path(name), "--batch", "4", "--gpus", "1", "--json", plan});
    ASSERT_EQ(planned.exit_code, 0) << testing_cli::describe(planned);
    const std::string saved = (dir.path() / (name + ".safetensors")).string();
    const testing_cli::Outcome trained =
        testing_cli::run({"train", "--plan", plan, "--model", onnx_path(name), "--steps", "1", "--lr", "1e-20",
                          "--momentum", "0", "--init-from", onnx_path(name), "--save", saved});
    ASSERT_EQ(trained.exit_code, 0) << testing_cli::describe(trained);
  }
  const safetensors::Reader checkpoint((dir.path() / "tiny_linear.onnx.safetensors").string());
  const std::vector<float> fc1 = checkpoint.read("fc1.weight").floats();
  ASSERT_EQ(fc1.size(), 6U * 32U);
  for (int64_t o = 0; o < 6; ++o) {
    for (int64_t i = 0; i < 32; ++i) {
      EXPECT_NEAR(fc1[static_cast<size_t>(o * 32 + i)], weight_value(i * 6 + o), 1e-12) << o << "," << i;
    }
  }
  EXPECT_EQ(checkpoint.read("fc2.bias").floats().size(), 5U);
}

// What the runtime cannot train: one line naming the operator, node and position; exit 2.
TEST(OnnxCommands, AReorderingReshapeOrAnLstmIsOneLineExitTwo) {
  ScratchDir dir;
  for (const auto& [name, line] :
       {std::pair<std::string, std::string>{"bad_reshape.onnx", "node 1 '/reshape/Reshape' (Reshape): shape"},
        {"bad_lstm.onnx", "node 0 '/lstm/LSTM' (LSTM): operator LSTM is not supported"}}) {
    const std::string plan = (dir.path() / "plan.json").string();
    const testing_cli::Outcome r =
        testing_cli::run({"plan", "--model", onnx_path(name), "--batch", "4", "--gpus", "1", "--json", plan});
    EXPECT_EQ(r.exit_code, 2) << testing_cli::describe(r);
    ASSERT_EQ(testing_cli::lines_of(r.err).size(), 1U) << r.err;
    EXPECT_THAT(r.err, HasSubstr(line));
    EXPECT_FALSE(std::filesystem::exists(plan));
  }
}

TEST(OnnxCommands, BadFileIsOneLineExitTwoAndNothingWritten) {
  ScratchDir dir;
  for (const std::string name : {"bad_cycle.onnx", "bad_tanh.onnx", "bad_opset12.onnx"}) {
    const std::string plan = (dir.path() / "plan.json").string();
    const testing_cli::Outcome r =
        testing_cli::run({"plan", "--model", onnx_path(name), "--batch", "4", "--gpus", "1", "--json", plan});
    EXPECT_EQ(r.exit_code, 2) << testing_cli::describe(r);
    EXPECT_EQ(testing_cli::lines_of(r.err).size(), 1U) << r.err;
    EXPECT_FALSE(std::filesystem::exists(plan));
  }
  const std::string truncated = (dir.path() / "truncated.onnx").string();
  testing_cli::write_text(truncated, onnx_bytes("tiny.onnx").substr(0, 100));
  const testing_cli::Outcome r = testing_cli::run({"models", "--export", truncated});
  EXPECT_EQ(r.exit_code, 2) << testing_cli::describe(r);
  EXPECT_THAT(r.err, HasSubstr("not an ONNX model"));
}

}  // namespace
}  // namespace layerplan
