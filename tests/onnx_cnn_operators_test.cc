// ONNX operators of torchvision's CNNs (docs/model-format.md, "ONNX models"), in files built
// here as PyTorch 1.13 exports them: ReduceMean over height and width as global average
// pooling (keepdims or not; opset 18 with its axes as an input), GELU in the erf and the
// tanh form as one gelu layer, and models with layer normalization or attention refused
// naming the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "model/onnx_model.h"
#include "tests/onnx_builder.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using testing_onnx::OnnxBuilder;

// input 3x8x8 -> Conv (4 filters, 3x3) -> Relu "r" (N x 4 x 6 x 6).
OnnxBuilder conv_relu(int64_t opset) {
  OnnxBuilder b(opset, 3, 8, 8);
  b.float_initializer("conv.weight", {4, 3, 3, 3});
  b.node("Conv", {"input", "conv.weight"}, "c");
  b.node("Relu", {"c"}, "r");
  return b;
}

// `x` (N x 4 x 6 x 6, or N x 4 when `flat`) -> [GlobalAveragePool ->] Flatten -> Gemm.
void classifier(OnnxBuilder& b, const std::string& x, bool pooled, bool flat) {
  std::string in = x;
  if (!pooled) {
    b.node("GlobalAveragePool", {in}, "pool");
    in = "pool";
  }
  if (!flat) {
    b.node("Flatten", {in}, "flat");
    in = "flat";
  }
  b.float_initializer("fc.weight", {2, 4});
  OnnxBuilder::integer(b.node("Gemm", {in, "fc.weight"}, "logits"), "transB", 1);
  b.output("logits");
}

OnnxBuilder conv_relu_classifier(int64_t opset) {
  OnnxBuilder b = conv_relu(opset);
  classifier(b, "r", false, false);
  return b;
}

std::string kinds(const ModelGraph& g) {
  std::string out;
  for (const Layer& l : g.layers()) {
    const std::string_view kind = l.kind == LayerKind::kActivation ? activation_name(l.activation) : kind_name(l.kind);
    out += (out.empty() ? "" : " ") + std::string(kind);
  }
  return out;
}

ModelGraph read(const OnnxBuilder& b) { return model_from_onnx(b.bytes(), 8, "m.onnx", "m.onnx"); }

std::string refusal(const OnnxBuilder& b) {
  try {
    read(b);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "read";
}

TEST(OnnxCnnOperators, ReduceMeanOverHeightAndWidthIsGlobalAveragePooling) {
  OnnxBuilder kept = conv_relu(14);  // AdaptiveAvgPool2d(1) written as x.mean([2, 3], keepdim=True)
  onnx::NodeProto& mean = kept.node("ReduceMean", {"r"}, "m");
  OnnxBuilder::ints(mean, "axes", {2, 3});
  classifier(kept, "m", true, false);
  const ModelGraph g = read(kept);
  EXPECT_EQ(kinds(g), "input conv2d relu global_avg_pool flatten fully_connected softmax_cross_entropy");
  EXPECT_EQ(g.layer(3).output, (Shape{{8, 4, 1, 1}}));

  OnnxBuilder dropped = conv_relu(14);  // mnasnet's x.mean([2, 3]): N x C, read by the Linear
  onnx::NodeProto& flat_mean = dropped.node("ReduceMean", {"r"}, "m");
  OnnxBuilder::ints(flat_mean, "axes", {-1, -2});
  OnnxBuilder::integer(flat_mean, "keepdims", 0);
  classifier(dropped, "m", true, true);
  EXPECT_EQ(kinds(read(dropped)), "input conv2d relu global_avg_pool fully_connected softmax_cross_entropy");
}

TEST(OnnxCnnOperators, Opset18ReduceMeanTakesItsAxesAsAnInput) {
  for (const bool from_constant_node : {false, true}) {
    OnnxBuilder b = conv_relu(18);
    if (from_constant_node) {
      onnx::AttributeProto& value = *b.node("Constant", {}, "axes").add_attribute();
      value.set_name("value");
      value.set_type(onnx::AttributeProto::TENSOR);
      value.mutable_t()->set_data_type(onnx::TensorProto::INT64);
      value.mutable_t()->add_dims(2);
      value.mutable_t()->add_int64_data(2);
      value.mutable_t()->add_int64_data(3);
    } else {
      b.int64_initializer("axes", {2, 3});
    }
    OnnxBuilder::integer(b.node("ReduceMean", {"r", "axes"}, "m"), "keepdims", 0);
    classifier(b, "m", true, true);
    EXPECT_EQ(kinds(read(b)), "input conv2d relu global_avg_pool fully_connected softmax_cross_entropy")
        << from_constant_node;
  }
  OnnxBuilder computed = conv_relu(18);
  computed.node("Shape", {"r"}, "axes");
  computed.node("ReduceMean", {"r", "axes"}, "m");
  classifier(computed, "m", true, false);
  EXPECT_THAT(refusal(computed), HasSubstr("m.onnx: node 3 '/m' (ReduceMean): the axes input 'axes' is computed"));
}

TEST(OnnxCnnOperators, Opset19IsRefused) {
  OnnxBuilder b = conv_relu(19);
  classifier(b, "r", false, false);
  EXPECT_EQ(refusal(b), "m.onnx: opset 19: expected 13 to 18 (torch.onnx.export(..., opset_version=17))");
  EXPECT_EQ(kinds(read(conv_relu_classifier(18))), kinds(read(conv_relu_classifier(14))));
}

TEST(OnnxCnnOperators, ReduceMeanOverOtherAxesIsRefusedNamingThem) {
  OnnxBuilder b = conv_relu(14);
  OnnxBuilder::ints(b.node("ReduceMean", {"r"}, "m"), "axes", {1});
  classifier(b, "m", false, false);
  EXPECT_EQ(refusal(b),
            "m.onnx: node 2 '/m' (ReduceMean): mean over axes [1] of a 8x4x6x6 input: only the mean over height and "
            "width (axes 2, 3: global average pooling) is supported");
}

// nn.GELU() as PyTorch 1.13 exports it: Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5).
void gelu_erf(OnnxBuilder& b, const std::string& x, float sqrt2 = 1.41421354F) {
  b.scalar("sqrt2", sqrt2);
  b.node("Div", {x, "sqrt2"}, "g_div");
  b.node("Erf", {"g_div"}, "g_erf");
  b.scalar("one", 1.0F);
  b.node("Add", {"g_erf", "one"}, "g_add");
  b.node("Mul", {x, "g_add"}, "g_mul");
  b.scalar("half", 0.5F);
  b.node("Mul", {"g_mul", "half"}, "gelu", "/gelu/Mul_1");
}

// nn.GELU(approximate='tanh'): 0.5 * (x * (1 + tanh(√(2/π) * (x + 0.044715 * x * (x * x))))).
void gelu_tanh(OnnxBuilder& b, const std::string& x) {
  b.node("Mul", {x, x}, "t_sq");
  b.node("Mul", {x, "t_sq"}, "t_cube");
  b.scalar("kappa", 0.044715F);
  b.node("Mul", {"kappa", "t_cube"}, "t_k");
  b.node("Add", {x, "t_k"}, "t_inner");
  b.scalar("beta", 0.797884583F);
  b.node("Mul", {"beta", "t_inner"}, "t_u");
  b.node("Tanh", {"t_u"}, "t_tanh");
  b.scalar("one", 1.0F);
  b.node("Add", {"one", "t_tanh"}, "t_add");
  b.node("Mul", {x, "t_add"}, "t_mul");
  b.scalar("half", 0.5F);
  b.node("Mul", {"half", "t_mul"}, "gelu", "/gelu/Mul_5");
}

TEST(OnnxCnnOperators, GeluInTheErfAndTheTanhFormIsOneLayer) {
  for (const bool tanh : {false, true}) {
    OnnxBuilder b = conv_relu(14);
    if (tanh) {
      gelu_tanh(b, "r");
    } else {
      gelu_erf(b, "r");
    }
    classifier(b, "gelu", false, false);
    const ModelGraph g = read(b);
    EXPECT_EQ(kinds(g), "input conv2d relu gelu global_avg_pool flatten fully_connected softmax_cross_entropy");
    EXPECT_EQ(g.layer(3).name, tanh ? "/gelu/Mul_5" : "/gelu/Mul_1");
    EXPECT_EQ(g.layer(3).inputs, (std::vector<int>{2}));
    EXPECT_EQ(g.layer(3).gelu_approximation, tanh ? GeluApproximation::kTanh : GeluApproximation::kNone);
  }
}

TEST(OnnxCnnOperators, GeluIsKnownByItsValuesWhateverTheOrder) {
  // x * 0.5 * (1 + erf(x / √2)), as other code writes it: the half taken first.
  OnnxBuilder b = conv_relu(14);
  b.scalar("half", 0.5F);
  b.node("Mul", {"r", "half"}, "h");
  b.scalar("sqrt2", 1.41421354F);
  b.node("Div", {"r", "sqrt2"}, "d");
  b.node("Erf", {"d"}, "e");
  b.scalar("one", 1.0F);
  b.node("Add", {"one", "e"}, "a");
  b.node("Mul", {"h", "a"}, "gelu");
  classifier(b, "gelu", false, false);
  EXPECT_EQ(kinds(read(b)), "input conv2d relu gelu global_avg_pool flatten fully_connected softmax_cross_entropy");

  OnnxBuilder other = conv_relu(14);  // x Φ(x √2 / 1.5): not GELU
  gelu_erf(other, "r", 1.5F);
  classifier(other, "gelu", false, false);
  EXPECT_THAT(refusal(other), HasSubstr("m.onnx: node 4 '/g_erf' (Erf): operator Erf is not supported"));
}

TEST(OnnxCnnOperators, LayerNormOrAttentionIsRefusedNamingTheNode) {
  OnnxBuilder fused = conv_relu(17);
  fused.float_initializer("ln.weight", {6});
  fused.node("LayerNormalization", {"r", "ln.weight"}, "n", "/ln/LayerNormalization");
  classifier(fused, "n", false, false);
  EXPECT_EQ(refusal(fused),
            "m.onnx: node 2 '/ln/LayerNormalization' (LayerNormalization): operator LayerNormalization (layer "
            "normalization): models with LayerNorm or attention are not supported (layerplan reads CNNs)");

  OnnxBuilder decomposed = conv_relu(14);  // F.layer_norm before opset 17: x - mean(x) over the last axis, ...
  OnnxBuilder::ints(decomposed.node("ReduceMean", {"r"}, "mu", "/ln/ReduceMean"), "axes", {-1});
  decomposed.node("Sub", {"r", "mu"}, "d");
  decomposed.scalar("two", 2.0F);
  decomposed.node("Pow", {"d", "two"}, "sq");
  classifier(decomposed, "sq", false, false);
  EXPECT_THAT(refusal(decomposed), HasSubstr("m.onnx: node 2 '/ln/ReduceMean' (ReduceMean): x - mean(x) over axes "
                                             "[-1] (a layer normalization written out): models with LayerNorm"));

  OnnxBuilder attention = conv_relu(14);  // scores = q @ k
  attention.node("MatMul", {"r", "r"}, "scores", "/attn/MatMul");
  attention.node("Softmax", {"scores"}, "p");
  classifier(attention, "p", false, false);
  EXPECT_THAT(refusal(attention), HasSubstr("m.onnx: node 2 '/attn/MatMul' (MatMul): a MatMul of two computed "
                                            "tensors (attention): models with LayerNorm or attention"));
}

}  // namespace
}  // namespace layerplan
