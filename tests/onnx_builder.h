#pragma once
// ONNX models built as protos in a test (tests/onnx_*_test.cc link libonnx): an image input
// (a symbolic batch, C x H x W), nodes appended in order, one graph output.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace layerplan::testing_onnx {

class OnnxBuilder {
 public:
  OnnxBuilder(int64_t opset, int64_t channels, int64_t height, int64_t width) {
    model_.set_ir_version(8);
    onnx::OperatorSetIdProto& id = *model_.add_opset_import();
    id.set_domain("");
    id.set_version(opset);
    graph().set_name("g");
    onnx::ValueInfoProto& in = *graph().add_input();
    in.set_name("input");
    onnx::TypeProto_Tensor& t = *in.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto::FLOAT);
    t.mutable_shape()->add_dim()->set_dim_param("batch");
    for (const int64_t d : {channels, height, width}) t.mutable_shape()->add_dim()->set_dim_value(d);
  }

  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                        const std::string& name = "") {
    onnx::NodeProto& n = *graph().add_node();
    n.set_op_type(op);
    n.set_name(name.empty() ? "/" + output : name);
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output);
    return n;
  }

  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (const int64_t v : values) a.add_ints(v);
  }

  static void integer(onnx::NodeProto& n, const std::string& name, int64_t value) {
    onnx::AttributeProto& a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(value);
  }

  // A Constant node whose value is the float scalar `value`.
  void scalar(const std::string& output, float value) {
    onnx::AttributeProto& a = *node("Constant", {}, output).add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a.mutable_t()->add_float_data(value);
  }

  onnx::TensorProto& int64_initializer(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (const int64_t v : values) t.add_int64_data(v);
    return t;
  }

  // A float initializer of shape `dims`, all `value`.
  onnx::TensorProto& float_initializer(const std::string& name, const std::vector<int64_t>& dims, float value = 0.5F) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (const int64_t d : dims) {
      t.add_dims(d);
      count *= d;
    }
    for (int64_t i = 0; i < count; ++i) t.add_float_data(value);
    return t;
  }

  // A graph output of `rank` dimensions of unknown size (the logits: 2).
  void output(const std::string& name, int rank = 2) {
    onnx::ValueInfoProto& out = *graph().add_output();
    out.set_name(name);
    onnx::TypeProto_Tensor& t = *out.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto::FLOAT);
    for (int d = 0; d < rank; ++d) t.mutable_shape()->add_dim();
  }

  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace layerplan::testing_onnx
