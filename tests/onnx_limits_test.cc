// Limits before work on ONNX files (docs/limits.md): a graph with more nodes, initializers,
// inputs or outputs than common/limits.h allows is refused while the file is read, before
// protobuf builds it and before libonnx's checker; a tensor anywhere in the model whose
// data lies in an external file is refused before libonnx could stat or open that file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "common/limits.h"
#include "model/onnx_model.h"
#include "tests/cli_harness.h"
#include "tests/onnx_builder.h"
#include "tests/scratch_dir.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_onnx::OnnxBuilder;

// The refusal of reading `bytes`, or "read".
std::string refusal(const std::string& bytes) {
  try {
    model_from_onnx(bytes, 8, "m.onnx", "m.onnx");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "read";
}

// conv -> relu -> global pool -> flatten -> fc: a model layerplan reads.
OnnxBuilder small_cnn() {
  OnnxBuilder b(14, 3, 8, 8);
  b.float_initializer("conv.weight", {4, 3, 3, 3});
  b.node("Conv", {"input", "conv.weight"}, "c");
  b.node("Relu", {"c"}, "r");
  b.node("GlobalAveragePool", {"r"}, "p");
  b.node("Flatten", {"p"}, "f");
  b.float_initializer("fc.weight", {2, 4});
  OnnxBuilder::integer(b.node("Gemm", {"f", "fc.weight"}, "logits"), "transB", 1);
  b.output("logits");
  return b;
}

TEST(OnnxLimits, TheSmallModelReads) { EXPECT_EQ(refusal(small_cnn().bytes()), "read"); }

// A chain of `count` Relu nodes after the image.
OnnxBuilder relu_chain(int64_t count) {
  OnnxBuilder b(14, 3, 8, 8);
  std::string previous = "input";
  for (int64_t i = 0; i < count; ++i) {
    const std::string out = "r" + std::to_string(i);
    b.node("Relu", {previous}, out);
    previous = out;
  }
  b.output(previous);
  return b;
}

TEST(OnnxLimits, OneNodeTooManyIsRefusedAsTheFileIsRead) {
  const std::string bytes = relu_chain(kMaxOnnxNodes + 1).bytes();
  const auto start = std::chrono::steady_clock::now();
  const std::string what = refusal(bytes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(what, "m.onnx: more than 131072 nodes in the graph: the limit (docs/limits.md)");
  // libonnx's checker and shape inference take seconds for as many nodes; the count, a
  // pass over the bytes that stops at the first node too many, takes milliseconds.
  EXPECT_LT(seconds, 0.5);
}

TEST(OnnxLimits, TooManyInitializersInputsOrOutputsAreRefused) {
  OnnxBuilder initializers = small_cnn();
  for (int64_t i = 0; i < kMaxOnnxInitializers - 2; ++i) initializers.float_initializer("i" + std::to_string(i), {1});
  EXPECT_EQ(refusal(initializers.bytes()), "read");  // two weights and these: at the limit
  onnx::SparseTensorProto& sparse = *initializers.graph().add_sparse_initializer();
  sparse.mutable_values()->set_name("s");
  EXPECT_EQ(refusal(initializers.bytes()),
            "m.onnx: more than 131072 initializers (sparse ones included) in the graph: the limit (docs/limits.md)");

  OnnxBuilder inputs = small_cnn();
  for (int64_t i = 0; i < kMaxOnnxGraphInputs; ++i) inputs.graph().add_input()->set_name("i" + std::to_string(i));
  EXPECT_EQ(refusal(inputs.bytes()), "m.onnx: more than 131072 graph inputs in the graph: the limit (docs/limits.md)");

  OnnxBuilder outputs = small_cnn();
  for (int64_t i = 0; i < kMaxOnnxValueInfos; ++i) outputs.graph().add_value_info()->set_name("v" + std::to_string(i));
  EXPECT_THAT(refusal(outputs.bytes()), HasSubstr("m.onnx: more than 131072 graph outputs and value_info entries"));
}

TEST(OnnxLimits, PlanOfTooManyNodesIsOneLineExitTwo) {
  ScratchDir dir;
  const std::string model = dir.file("chain.onnx"), plan = dir.file("plan.json");
  testing_cli::write_text(model, relu_chain(kMaxOnnxNodes + 1).bytes());
  const testing_cli::Outcome r = testing_cli::run({"plan", "--model", model, "--gpus", "2", "--json", plan});
  EXPECT_EQ(r.exit_code, 2) << testing_cli::describe(r);
  ASSERT_EQ(testing_cli::lines_of(r.err).size(), 1U) << r.err;
  EXPECT_THAT(r.err, HasSubstr("more than 131072 nodes in the graph"));
  EXPECT_FALSE(std::filesystem::exists(plan));
}

// External data: the tensor says its bytes are in `location`. The locations below are a
// FIFO in a scratch folder (opening it to read would block the test until it timed out)
// and a path that climbs out of the working directory; libonnx 1.12's checker stat()s such
// a path, and a Constant's was not refused before.
void make_external(onnx::TensorProto& t, const std::string& location) {
  t.clear_float_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto& entry = *t.add_external_data();
  entry.set_key("location");
  entry.set_value(location);
}

class OnnxExternalData : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0); }
  ScratchDir dir_;
  std::string fifo_ = dir_.file("weights.fifo");
};

TEST_F(OnnxExternalData, InAnInitializerIsRefusedNamingIt) {
  OnnxBuilder b = small_cnn();
  make_external(*b.graph().mutable_initializer(0), fifo_);
  EXPECT_EQ(refusal(b.bytes()), "m.onnx: initializer 'conv.weight' keeps its data in an external file ('" + fifo_ +
                                    "'): not supported (export the weights inside the file)");
}

TEST_F(OnnxExternalData, InAConstantNodesValueIsRefusedNamingTheNode) {
  for (const std::string& location : {fifo_, std::string("../../../etc/shadow")}) {
    OnnxBuilder b = small_cnn();
    b.scalar("c", 1.0F);
    b.graph().mutable_node(b.graph().node_size() - 1)->set_name("/const");
    make_external(*b.graph().mutable_node(b.graph().node_size() - 1)->mutable_attribute(0)->mutable_t(), location);
    const std::string what = refusal(b.bytes());
    EXPECT_THAT(what, HasSubstr("m.onnx: node 5 '/const' (Constant): attribute 'value': tensor '' keeps its data in "
                                "an external file ('" +
                                location + "')"));
    EXPECT_THAT(what, Not(HasSubstr("\n")));
  }
}

TEST_F(OnnxExternalData, InASparseInitializerOrASubgraphIsRefused) {
  OnnxBuilder sparse = small_cnn();
  onnx::SparseTensorProto& s = *sparse.graph().add_sparse_initializer();
  s.mutable_values()->set_name("sparse.values");
  s.mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  make_external(*s.mutable_values(), fifo_);
  EXPECT_THAT(refusal(sparse.bytes()),
              HasSubstr("m.onnx: sparse initializer 'sparse.values' (values) keeps its data in an external file"));

  // A Constant inside an If node's branch: refused before the If is refused as unsupported.
  OnnxBuilder nested = small_cnn();
  onnx::NodeProto& branch_owner = nested.node("If", {"cond"}, "chosen", "/if");
  onnx::AttributeProto& then_branch = *branch_owner.add_attribute();
  then_branch.set_name("then_branch");
  then_branch.set_type(onnx::AttributeProto::GRAPH);
  onnx::NodeProto& inner = *then_branch.mutable_g()->add_node();
  inner.set_op_type("Constant");
  inner.set_name("/inner");
  inner.add_output("k");
  onnx::AttributeProto& value = *inner.add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_name("k");
  make_external(*value.mutable_t(), fifo_);
  EXPECT_THAT(refusal(nested.bytes()), HasSubstr("m.onnx: node 5 '/if' (If): attribute 'then_branch': node 0 "
                                                 "'/inner' (Constant): attribute 'value': tensor 'k' keeps its data"));
}

TEST_F(OnnxExternalData, PlanIsOneLineExitTwoAndNothingWritten) {
  OnnxBuilder b = small_cnn();
  b.scalar("c", 1.0F);
  make_external(*b.graph().mutable_node(b.graph().node_size() - 1)->mutable_attribute(0)->mutable_t(), fifo_);
  const std::string model = dir_.file("m.onnx"), plan = dir_.file("plan.json");
  testing_cli::write_text(model, b.bytes());
  const testing_cli::Outcome r = testing_cli::run({"plan", "--model", model, "--gpus", "2", "--json", plan});
  EXPECT_EQ(r.exit_code, 2) << testing_cli::describe(r);
  ASSERT_EQ(testing_cli::lines_of(r.err).size(), 1U) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(Constant): attribute 'value': tensor '' keeps its data in an external file"));
  EXPECT_FALSE(std::filesystem::exists(plan));
}

}  // namespace
}  // namespace layerplan
