// ONNX import of ShuffleNet v2's channel shuffle and x.chunk(2, dim=1), from a proto built
// here as torch.onnx.export (opset 14, a symbolic batch) writes torchvision's
// channel_shuffle: Reshape to (N, g, C/g, H, W) with the shape computed by Shape, Gather,
// Div, Cast, Unsqueeze and Concat nodes, Transpose (0, 2, 1, 3, 4), Reshape to (N, -1, H, W);
// and the chunk as two Slices whose bounds Add, Div and Mul compute. They become a
// channel_shuffle layer and two channel_slice layers, which a model file writes and reads
// back; any other form is one line naming the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "model/model_file.h"
#include "model/onnx_model.h"
#include "tests/onnx_builder.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;

// torchvision's export as OnnxBuilder writes it, plus the Constants and shape arithmetic of
// PyTorch's x.size(i).
class Builder : public testing_onnx::OnnxBuilder {
 public:
  Builder() : OnnxBuilder(14, 8, 4, 4) {}

  // A Constant node of int64 values (a scalar when `scalar`).
  std::string constant(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
    onnx::AttributeProto& a = *node("Constant", {}, name).add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto& t = *a.mutable_t();
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    for (const int64_t v : values) t.add_int64_data(v);
    return name;
  }
  // A weight whose values differ, (i % 5) / 8.
  void weight(const std::string& name, const std::vector<int64_t>& dims) {
    onnx::TensorProto& t = float_initializer(name, dims);
    for (int i = 0; i < t.float_data_size(); ++i) t.set_float_data(i, static_cast<float>(i % 5) / 8.0F);
  }
  // Dimension `index` of `tensor`'s shape, unsqueezed to 1-D, as PyTorch exports x.size(i).
  std::string size_of(const std::string& tensor, int64_t index) {
    const std::string s = std::to_string(index);
    node("Shape", {tensor}, "Shape_" + s);
    node("Gather", {"Shape_" + s, constant("index_" + s, {index}, true)}, "Gather_" + s);
    return unsqueezed("Gather_" + s);
  }
  std::string unsqueezed(const std::string& scalar) {
    node("Unsqueeze", {scalar, constant("axes_" + scalar, {0})}, "Unsqueeze_" + scalar);
    return "Unsqueeze_" + scalar;
  }
};

// conv (8 channels, 4x4) -> channel_shuffle(x, 2) -> chunk(2) -> cat(x1, relu(x2)) -> GAP -> fc.
Builder shufflenet_piece() {
  Builder b;
  b.weight("conv.weight", {8, 8, 1, 1});
  b.node("Conv", {"input", "conv.weight"}, "conv");
  // channel_shuffle: (N, 2, C // 2, H, W), the division computed from the shape.
  const std::string n = b.size_of("conv", 0), h = b.size_of("conv", 2), w = b.size_of("conv", 3);
  b.node("Shape", {"conv"}, "Shape_c");
  b.node("Gather", {"Shape_c", b.constant("index_c", {1}, true)}, "channels");
  b.node("Div", {"channels", b.constant("groups", {2}, true)}, "Div");
  Builder::integer(b.node("Cast", {"Div"}, "Cast"), "to", onnx::TensorProto::INT64);
  Builder::integer(
      b.node("Concat", {n, b.unsqueezed(b.constant("g", {2}, true)), b.unsqueezed("Cast"), h, w}, "shape5"), "axis", 0);
  b.node("Reshape", {"conv", "shape5"}, "Reshape");
  Builder::ints(b.node("Transpose", {"Reshape"}, "Transpose"), "perm", {0, 2, 1, 3, 4});
  Builder::integer(b.node("Concat", {n, b.unsqueezed(b.constant("minus_one", {-1}, true)), h, w}, "shape4"), "axis", 0);
  b.node("Reshape", {"Transpose", "shape4"}, "shuffled");
  // x.chunk(2, dim=1): ends (C + 1) // 2 * 1 and * 2.
  b.node("Shape", {"shuffled"}, "Shape_s");
  b.node("Gather", {"Shape_s", b.constant("index_s", {1})}, "channels_s");
  b.node("Add", {"channels_s", b.constant("one", {1})}, "plus_one");
  b.node("Div", {"plus_one", b.constant("two", {2})}, "half");
  b.node("Mul", {"half", b.constant("times1", {1})}, "end0");
  b.node("Mul", {"half", b.constant("times2", {2})}, "end1");
  b.node("Slice", {"shuffled", b.constant("start0", {0}), "end0", b.constant("axes", {1})}, "x1");
  b.node("Slice", {"shuffled", "end0", "end1", "axes"}, "x2");
  b.node("Relu", {"x2"}, "relu");
  Builder::integer(b.node("Concat", {"x1", "relu"}, "cat"), "axis", 1);
  b.node("GlobalAveragePool", {"cat"}, "gap");
  b.node("Flatten", {"gap"}, "flat");
  b.weight("fc.weight", {10, 8});
  b.weight("fc.bias", {10});
  Builder::integer(b.node("Gemm", {"flat", "fc.weight", "fc.bias"}, "logits"), "transB", 1);
  b.output("logits");
  return b;
}

ModelGraph import(Builder& b) { return model_from_onnx(b.model().SerializeAsString(), 2, "s.onnx", "s.onnx"); }

onnx::NodeProto& node_named(Builder& b, const std::string& name) {
  for (onnx::NodeProto& n : *b.graph().mutable_node()) {
    if (n.name() == name) return n;
  }
  throw std::logic_error("no node " + name);
}

std::string kinds(const ModelGraph& g) {
  std::string out;
  for (const Layer& l : g.layers()) out += std::string(out.empty() ? "" : " ") + std::string(kind_name(l.kind));
  return out;
}

TEST(OnnxChannelShuffle, TheExportedShuffleAndChunkBecomeTheirLayers) {
  Builder b = shufflenet_piece();
  const ModelGraph g = import(b);
  EXPECT_EQ(kinds(g),
            "input conv2d channel_shuffle channel_slice channel_slice relu concat global_avg_pool flatten "
            "fully_connected softmax_cross_entropy");
  const Layer& shuffle = g.layer(2);
  EXPECT_EQ(shuffle.name, "/Reshape");  // named after the first Reshape
  EXPECT_EQ(shuffle.groups, 2);
  EXPECT_EQ(shuffle.output, (Shape{{2, 8, 4, 4}}));
  EXPECT_EQ(g.layer(3).first_channel, 0);
  EXPECT_EQ(g.layer(3).output.c(), 4);
  EXPECT_EQ(g.layer(4).first_channel, 4);
  EXPECT_EQ(g.layer(4).output.c(), 4);
  EXPECT_EQ(g.layer(3).inputs, (std::vector<int>{2}));
  EXPECT_EQ(g.layer(6).inputs, (std::vector<int>{3, 5}));
}

TEST(OnnxChannelShuffle, AModelFileWritesAndReadsBothKindsBack) {
  Builder b = shufflenet_piece();
  const ModelGraph g = import(b);
  const std::string text = model_to_json(g);
  EXPECT_THAT(text, HasSubstr("\"kind\": \"channel_shuffle\",\n      \"groups\": 2"));
  EXPECT_THAT(text, HasSubstr("\"kind\": \"channel_slice\",\n      \"input\": \"/Reshape\",\n      \"first_channel\": "
                              "4,\n      \"channels\": 4"));
  const ModelGraph back = model_from_json(text, 2, "m.json");
  ASSERT_EQ(back.size(), g.size());
  for (int id = 0; id < g.size(); ++id) {
    EXPECT_EQ(back.layer(id).kind, g.layer(id).kind);
    EXPECT_EQ(back.layer(id).groups, g.layer(id).groups);
    EXPECT_EQ(back.layer(id).first_channel, g.layer(id).first_channel);
    EXPECT_EQ(back.layer(id).output, g.layer(id).output);
  }
}

TEST(OnnxChannelShuffle, ModelFilesRefuseGroupsOrChannelsThatDoNotFit) {
  const std::string head =
      R"({"format": "layerplan-model", "version": 1, "name": "m", "input": {"channels": 6, "height": 2, "width": 2},
          "layers": [)";
  auto refused = [&](const std::string& layer) {
    try {
      model_from_json(head + layer + "]}", 1, "m.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refused(R"({"name": "s", "kind": "channel_shuffle", "groups": 4})"),
              HasSubstr("groups 4 must be >= 2 and divide its input channels (6)"));
  EXPECT_THAT(refused(R"({"name": "s", "kind": "channel_shuffle", "groups": 1})"), HasSubstr("groups"));
  EXPECT_THAT(refused(R"({"name": "s", "kind": "channel_slice", "first_channel": 4, "channels": 3})"),
              HasSubstr("must be a non-empty range inside its input's 6"));
  EXPECT_THAT(refused(R"({"name": "s", "kind": "channel_slice", "channels": 3})"), HasSubstr("missing first_channel"));
}

// Each change of the piece above, and the one line it is refused with.
struct Refusal {
  const char* name;
  void (*change)(Builder&);
  const char* message;
};

const Refusal kRefusals[] = {
    {"another perm", [](Builder& b) { node_named(b, "/Transpose").mutable_attribute(0)->set_ints(1, 1); },
     "'/Reshape' (Reshape): its Transpose has another perm: expected a channel shuffle"},
    {"no transpose",
     [](Builder& b) {
       onnx::NodeProto& t = node_named(b, "/Transpose");
       t.set_op_type("Relu");
       t.clear_attribute();
     },
     "'/Reshape' (Reshape): a Reshape to 5-D that no single Transpose reads"},
    {"back to another shape",
     [](Builder& b) {
       node_named(b, "/shuffled").set_input(1, b.constant("other", {0, 4, 8, 4}));
     },
     "'/shuffled' (Reshape): shape (0, 4, 8, 4): expected a channel shuffle"},
    {"groups that do not divide",
     [](Builder& b) {
       node_named(b, "/Reshape").set_input(1, b.constant("groups3", {0, 3, 3, 4, 4}));
     },
     "'/Reshape' (Reshape): shape (0, 3, 3, 4, 4) of a 2x8x4x4 input: expected a channel shuffle"},
    {"a slice along height", [](Builder& b) { node_named(b, "/x2").set_input(3, b.constant("axes_h", {2})); },
     "'/x2' (Slice): axes 2: expected the channel axis, 1"},
    {"a division of activations", [](Builder& b) { node_named(b, "/Div").set_input(0, "conv"); },
     "'/Div' (Div): the inputs are not shapes: a Div is read only in shape arithmetic"},
    {"a cast to float",
     [](Builder& b) { node_named(b, "/Cast").mutable_attribute(0)->set_i(onnx::TensorProto::FLOAT); },
     "'/Cast' (Cast): to 1: expected 7 (int64)"},
    {"arithmetic of the batch", [](Builder& b) { node_named(b, "/Div").set_input(0, "Gather_0"); },
     "'/Div' (Div): a Div of the batch size, which the file leaves open"},
};

TEST(OnnxChannelShuffle, OtherFormsAreOneLineNamingTheNode) {
  for (const Refusal& r : kRefusals) {
    Builder b = shufflenet_piece();
    r.change(b);
    try {
      import(b);
      ADD_FAILURE() << r.name << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(r.message)) << r.name;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << r.name;
    }
  }
}

}  // namespace
}  // namespace layerplan
