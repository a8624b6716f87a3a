// Model files: every zoo model survives export and re-import unchanged (so the format can
// say everything the zoo says), a hand-written file builds the graph it describes, and
// every kind of mistake is named with the layer and field at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "common/error.h"
#include "model/layer_math.h"
#include "model/model_file.h"
#include "model/zoo.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

void expect_same_graph(const ModelGraph& a, const ModelGraph& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.name(), b.name());
  for (int i = 0; i < a.size(); ++i) {
    const Layer& x = a.layer(i);
    const Layer& y = b.layer(i);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind) << x.name;
    EXPECT_EQ(x.inputs, y.inputs) << x.name;
    EXPECT_EQ(x.output, y.output) << x.name;
    EXPECT_EQ(x.has_bias, y.has_bias) << x.name;
    EXPECT_EQ(x.window.kernel_h, y.window.kernel_h) << x.name;
    EXPECT_EQ(x.window.kernel_w, y.window.kernel_w) << x.name;
    EXPECT_EQ(x.window.stride_h, y.window.stride_h) << x.name;
    EXPECT_EQ(x.window.pad_w, y.window.pad_w) << x.name;
    EXPECT_EQ(x.activation, y.activation) << x.name;
    EXPECT_EQ(x.gelu_approximation, y.gelu_approximation) << x.name;
    EXPECT_EQ(x.alpha, y.alpha) << x.name;
    EXPECT_EQ(x.beta, y.beta) << x.name;
    EXPECT_EQ(x.epsilon, y.epsilon) << x.name;
    EXPECT_EQ(x.momentum, y.momentum) << x.name;
    EXPECT_EQ(x.dropout_ratio, y.dropout_ratio) << x.name;
  }
}

TEST(ModelFileTest, EveryZooModelRoundTrips) {
  for (const std::string& name : zoo_model_names()) {
    const ModelGraph zoo = build_zoo_model(name, 8);
    const ModelGraph back = model_from_json(model_to_json(zoo), 8, name + ".json");
    expect_same_graph(zoo, back);
    EXPECT_EQ(parameter_count(zoo), parameter_count(back)) << name;
  }
}

TEST(ModelFileTest, HandWrittenFileBuildsWhatItSays) {
  const std::string text = R"({
    "format": "layerplan-model", "version": 1, "name": "tiny",
    "input": {"channels": 3, "height": 32, "width": 32},
    "layers": [
      {"name": "conv1", "kind": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
      {"name": "relu1", "kind": "relu"},
      {"name": "branch", "kind": "conv2d", "input": "relu1", "out_channels": 8, "kernel": [1, 3], "padding": [0, 1], "bias": false},
      {"name": "cat", "kind": "concat", "inputs": ["relu1", "branch"]},
      {"name": "pool", "kind": "max_pool", "kernel": 2, "stride": 2},
      {"name": "flat", "kind": "flatten"},
      {"name": "fc", "kind": "fully_connected", "out_features": 10},
      {"name": "loss", "kind": "softmax_cross_entropy"}
    ]})";
  const ModelGraph g = model_from_json(text, 4, "tiny.json");
  EXPECT_EQ(g.name(), "tiny");
  ASSERT_EQ(g.size(), 9);
  EXPECT_EQ(g.layer(3).output, (Shape{{4, 8, 32, 32}}));
  EXPECT_FALSE(g.layer(3).has_bias);
  EXPECT_EQ(g.layer(4).output, (Shape{{4, 24, 32, 32}}));
  EXPECT_EQ(g.layer(5).output, (Shape{{4, 24, 16, 16}}));
  EXPECT_EQ(g.layer(7).output, (Shape{{4, 10, 1, 1}}));
  // conv1 16*3*9+16, branch 8*16*3, fc 24*16*16*10+10
  EXPECT_EQ(parameter_count(g), 16 * 3 * 9 + 16 + 8 * 16 * 3 + 24 * 16 * 16 * 10 + 10);
}

// ceil_mode and count_include_pad: read, and written only where not the default.
TEST(ModelFileTest, PoolingModesAreFieldsOfThePools) {
  const std::string text = R"({
    "format": "layerplan-model", "version": 1, "name": "pools",
    "input": {"channels": 2, "height": 8, "width": 10},
    "layers": [
      {"name": "max", "kind": "max_pool", "kernel": 3, "stride": 2, "ceil_mode": true},
      {"name": "avg", "kind": "avg_pool", "kernel": 3, "stride": 2, "padding": 1, "ceil_mode": true},
      {"name": "smooth", "kind": "avg_pool", "kernel": 3, "padding": 1, "count_include_pad": false},
      {"name": "plain", "kind": "avg_pool", "kernel": 2, "stride": 2, "ceil_mode": false, "count_include_pad": true},
      {"name": "flat", "kind": "flatten"},
      {"name": "loss", "kind": "softmax_cross_entropy"}
    ]})";
  const ModelGraph g = model_from_json(text, 2, "pools.json");
  EXPECT_EQ(g.layer(1).output, (Shape{{2, 2, 4, 5}}));  // 3x4 rounding down
  EXPECT_TRUE(g.layer(1).window.ceil_mode);
  EXPECT_EQ(g.layer(2).output, (Shape{{2, 2, 3, 3}}));
  EXPECT_TRUE(g.layer(2).window.count_include_pad);
  EXPECT_FALSE(g.layer(3).window.count_include_pad);
  EXPECT_FALSE(g.layer(3).window.ceil_mode);
  EXPECT_EQ(g.layer(4).output, (Shape{{2, 2, 1, 1}}));
  const std::string written = model_to_json(g);
  EXPECT_EQ(written.find("\"ceil_mode\": false"), std::string::npos);
  EXPECT_EQ(written.find("\"count_include_pad\": true"), std::string::npos);
  const ModelGraph back = model_from_json(written, 2, "back.json");
  for (int id = 1; id <= 4; ++id) {
    EXPECT_EQ(back.layer(id).window.ceil_mode, g.layer(id).window.ceil_mode) << id;
    EXPECT_EQ(back.layer(id).window.count_include_pad, g.layer(id).window.count_include_pad) << id;
    EXPECT_EQ(back.layer(id).output, g.layer(id).output) << id;
  }
}

// MobileNet v3's pieces: every activation, a squeeze-and-excitation block (global pool,
// two 1x1 convolutions, hard sigmoid, mul by the block's input), batch norm and dropout
// with PyTorch's other settings.
TEST(ModelFileTest, ActivationsMulAndLayerSettingsRoundTrip) {
  const std::string text = R"({
    "format": "layerplan-model", "version": 1, "name": "se",
    "input": {"channels": 3, "height": 16, "width": 16},
    "layers": [
      {"name": "conv", "kind": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1, "bias": false},
      {"name": "bn", "kind": "batch_norm", "epsilon": 0.001, "momentum": 0.01},
      {"name": "hs", "kind": "hardswish"},
      {"name": "squeeze", "kind": "global_avg_pool"},
      {"name": "fc1", "kind": "conv2d", "out_channels": 4, "kernel": 1},
      {"name": "r6", "kind": "relu6"},
      {"name": "fc2", "kind": "conv2d", "out_channels": 8, "kernel": 1},
      {"name": "gate", "kind": "hardsigmoid"},
      {"name": "scaled", "kind": "mul", "inputs": ["hs", "gate"]},
      {"name": "clip", "kind": "clip", "max": 2.5},
      {"name": "sig", "kind": "sigmoid"},
      {"name": "silu", "kind": "silu"},
      {"name": "hsig", "kind": "hardsigmoid", "alpha": 0.2, "beta": 0.4},
      {"name": "same", "kind": "mul", "inputs": ["silu", "hsig"]},
      {"name": "pool", "kind": "global_avg_pool"},
      {"name": "drop", "kind": "dropout", "ratio": 0.2},
      {"name": "flat", "kind": "flatten"},
      {"name": "fc", "kind": "fully_connected", "out_features": 10},
      {"name": "loss", "kind": "softmax_cross_entropy"}
    ]})";
  const ModelGraph g = model_from_json(text, 2, "se.json");
  EXPECT_EQ(g.layer(2).epsilon, 0.001);
  EXPECT_EQ(g.layer(2).momentum, 0.01);
  EXPECT_EQ(g.layer(6).activation, ActivationKind::kClip);
  EXPECT_EQ(g.layer(6).alpha, 0.0);
  EXPECT_EQ(g.layer(6).beta, 6.0);
  EXPECT_EQ(g.layer(8).activation, ActivationKind::kHardSigmoid);
  EXPECT_EQ(g.layer(8).alpha, kHardSigmoidAlpha);
  EXPECT_EQ(g.layer(9).kind, LayerKind::kMul);
  EXPECT_EQ(g.input_shape(g.layer(9), 1), (Shape{{2, 8, 1, 1}}));
  EXPECT_EQ(g.layer(10).alpha, -std::numeric_limits<float>::max());  // no min: unbounded below
  EXPECT_EQ(g.layer(13).beta, 0.4);
  EXPECT_EQ(g.layer(16).dropout_ratio, 0.2);
  const ModelGraph back = model_from_json(model_to_json(g), 2, "back.json");
  expect_same_graph(g, back);
  // Defaults are PyTorch's and stay out of the file.
  EXPECT_EQ(build_zoo_model("resnet50", 2).layer(2).epsilon, 1e-5);
  EXPECT_EQ(model_to_json(build_zoo_model("alexnet", 2)).find("ratio"), std::string::npos);
}

// GELU in both of PyTorch's forms; approximate "none" is the default and stays out of the file.
TEST(ModelFileTest, GeluLayersRoundTripWithTheirApproximation) {
  const std::string text = R"({
    "format": "layerplan-model", "version": 1, "name": "gelu",
    "input": {"channels": 3, "height": 8, "width": 8},
    "layers": [
      {"name": "conv", "kind": "conv2d", "out_channels": 4, "kernel": 3},
      {"name": "exact", "kind": "gelu"},
      {"name": "tanh", "kind": "gelu", "approximate": "tanh"},
      {"name": "pool", "kind": "global_avg_pool"},
      {"name": "flat", "kind": "flatten"},
      {"name": "fc", "kind": "fully_connected", "out_features": 2},
      {"name": "loss", "kind": "softmax_cross_entropy"}
    ]})";
  const ModelGraph g = model_from_json(text, 2, "gelu.json");
  EXPECT_EQ(g.layer(2).activation, ActivationKind::kGelu);
  EXPECT_EQ(g.layer(2).gelu_approximation, GeluApproximation::kNone);
  EXPECT_EQ(g.layer(3).gelu_approximation, GeluApproximation::kTanh);
  const std::string written = model_to_json(g);
  EXPECT_NE(written.find(R"("approximate": "tanh")"), std::string::npos) << written;
  EXPECT_EQ(written.find(R"("approximate": "none")"), std::string::npos) << written;
  expect_same_graph(g, model_from_json(written, 2, "back.json"));
  EXPECT_THROW(
      model_from_json(text.substr(0, text.find("\"tanh\"}")) + "\"erf\"}" + text.substr(text.find("\"tanh\"}") + 7), 2,
                      "bad.json"),
      UsageError);
}

std::string error_of(const std::string& layers, const std::string& head = "") {
  const std::string text = R"({"format": "layerplan-model", "version": 1, "name": "m", )" + head +
                           R"("input": {"channels": 1, "height": 8, "width": 8}, "layers": [)" + layers + "]}";
  try {
    model_from_json(text, 2, "m.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ModelFileTest, MistakesNameTheLayerAndField) {
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "conv3d"})"),
            "m.json: layers[0] 'a': unknown kind 'conv3d': expected conv2d, max_pool, avg_pool, global_avg_pool, "
            "fully_connected, relu, batch_norm, dropout, flatten, concat, add, softmax_cross_entropy, clip, relu6, "
            "sigmoid, silu, hardsigmoid, hardswish, gelu, mul, channel_shuffle or channel_slice");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "conv2d", "kernel": 3})"), "m.json: layers[0] 'a': missing out_channels");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "conv2d", "out_channels": "8"})"),
            "m.json: layers[0] 'a': out_channels \"8\": expected an integer from 1 to 1073741824");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "relu", "kernel": 3})"),
            "m.json: layers[0] 'a': unknown field 'kernel' for a relu layer");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "relu", "input": "b"})"),
            "m.json: layers[0] 'a': input 'b' is not an earlier layer");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "relu"}, {"name": "a", "kind": "relu"})"),
            "m.json: layers[1] 'a': a layer named 'a' exists already");
  EXPECT_THAT(error_of(R"({"name": "a", "kind": "max_pool", "kernel": 9})"),
              HasSubstr("m.json: layers[0] 'a': layer a: window 9/1/0 does not fit an input extent of 8"));
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "max_pool", "ceil_mode": 1})"),
            "m.json: layers[0] 'a': ceil_mode 1: expected true or false");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "max_pool", "count_include_pad": false})"),
            "m.json: layers[0] 'a': unknown field 'count_include_pad' for a max_pool layer");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "conv2d", "out_channels": 2, "ceil_mode": true})"),
            "m.json: layers[0] 'a': unknown field 'ceil_mode' for a conv2d layer");
  // PyTorch's rule: a window that could lie wholly in the padding has nothing to pool.
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "avg_pool", "kernel": 3, "padding": 2, "count_include_pad": false})"),
            "m.json: layers[0] 'a': layer a: padding 2x2 is more than half the kernel 3x3: expected at most half "
            "with ceil_mode or count_include_pad false");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "add", "inputs": ["input"]})"),
            "m.json: layers[0] 'a': add a needs two inputs");
  EXPECT_EQ(error_of("", R"("colour": "red", )"), "m.json: unknown field 'colour'");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "clip"})"), "m.json: layers[0] 'a': a clip layer needs min, max or both");
  EXPECT_THAT(error_of(R"({"name": "a", "kind": "clip", "min": 6, "max": 0})"),
              HasSubstr("m.json: layers[0] 'a': layer a: clip min 6 above max 0"));
  EXPECT_THAT(error_of(R"({"name": "a", "kind": "batch_norm", "epsilon": 0})"),
              HasSubstr("m.json: layers[0] 'a': layer a: epsilon 0: expected a positive number up to 1"));
  EXPECT_THAT(error_of(R"({"name": "a", "kind": "batch_norm", "momentum": 1.5})"),
              HasSubstr("layer a: momentum 1.5: expected 0 to 1"));
  EXPECT_THAT(error_of(R"({"name": "a", "kind": "dropout", "ratio": 1})"),
              HasSubstr("layer a: ratio 1: expected 0 to less than 1"));
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "dropout", "ratio": "half"})"),
            "m.json: layers[0] 'a': ratio \"half\": expected a number");
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "mul"})"), "m.json: layers[0] 'a': mul takes two inputs, [input, scale]");
  EXPECT_THAT(error_of(R"({"name": "p", "kind": "max_pool", "kernel": [8, 1]}, )"
                       R"({"name": "a", "kind": "mul", "inputs": ["input", "p"]})"),
              HasSubstr("mul a: input p is 2x1x1x8, expected 2x1x8x8 or 2x1x1x1"));
  EXPECT_EQ(error_of(R"({"name": "a", "kind": "sigmoid", "alpha": 1})"),
            "m.json: layers[0] 'a': unknown field 'alpha' for a sigmoid layer");
  EXPECT_EQ(error_of(""), "m.json: layers must be a non-empty array");
}

TEST(ModelFileTest, OtherDocumentsAreRefused) {
  try {
    model_from_json("{not json", 1, "x.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.json: not JSON"));
  }
  EXPECT_THROW(model_from_json(R"({"format": "layerplan-plan", "version": 1})", 1, "x.json"), UsageError);
  try {
    model_from_json(R"({"format": "layerplan-model", "version": 2})", 1, "x.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "x.json: model format version 2: expected 1");
  }
}

}  // namespace
}  // namespace layerplan
