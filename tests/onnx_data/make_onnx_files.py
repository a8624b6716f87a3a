#!/usr/bin/python3
"""Writes the ONNX test files of tests/onnx_data/ (tests/onnx_import_test.cc reads them).

Run once by hand, not by CI: `apt-get install python3-onnx` (ONNX 1.12, the version of
libonnx-dev), then `/usr/bin/python3 tests/onnx_data/make_onnx_files.py`. The files are
committed; rerunning writes the same bytes.

The graphs are written with onnx.helper as torch.onnx.export(model, x,
training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False) writes them (torch
1.13, opset 14): initializers under the state_dict names, node names "/module/path/Op",
batch normalization in training mode with three outputs, Dropout with its ratio and
training_mode inputs from Constant nodes. Weights are the pattern weight_value(i)
below, so that tests can recompute them.

  tiny.onnx           every supported operator; logits out (layerplan adds the loss)
  tiny_softmax.onnx   a LogSoftmax output (the loss itself), opset 17
  tiny_unsorted.onnx  tiny.onnx with its nodes listed out of order
  tiny_pad.onnx       Pad nodes folded into an AveragePool and a Conv
  grouped_conv.onnx   a depthwise and a grouped convolution (MobileNet, ResNeXt)
  tiny_folded.onnx    an eval-mode export with folding: batch norm folded into the
                      convolution, whose weights get generated names (onnx::Conv_N)
  tiny_pool_modes.onnx  pools with ceil_mode 1 (GoogLeNet's, SqueezeNet's; Pad + AveragePool
                      as PyTorch exports a padded one counting padding) and an AveragePool
                      with count_include_pad 0
  tiny_linear.onnx    a Reshape that flattens, Gemm with transB 0, MatMul by a Transpose
                      of a weight with the bias Add PyTorch writes after it, and MatMul
                      by an [in, out] initializer (an export with constant folding)
  tiny_view.onnx      x.view(x.size(0), -1) as PyTorch exports it: Shape, Gather,
                      Unsqueeze, Concat and Reshape
  mobilenet.onnx      MobileNet v3's and EfficientNet's operators: HardSwish, a
                      squeeze-and-excitation block (HardSigmoid scale, Mul), ReLU6 as
                      Clip(0, 6) with Constant bounds, SiLU as Mul(x, Sigmoid(x)) as
                      PyTorch 1.13 writes it, a Sigmoid and a Mul that stay apart, a Clip
                      with only a max, batch norm with eps 1e-3 and momentum 0.01, and
                      Dropout with ratio 0.2
  resnet50.onnx       torchvision's ResNet-50 graph; its weights are graph inputs with
                      shapes and no values (the file stays small), so it plans but
                      has no initial weights
  bad_*.onnx          one refusal each (tests/onnx_import_test.cc says which message)

Not written here: bad_zero_stride.onnx is the input fuzz_onnx_file found (tiny_unsorted.onnx
mutated: a Conv stride of 0, which made libonnx's shape inference die of SIGFPE), kept as
the fuzzer wrote it.
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT = TensorProto.FLOAT


def weight_value(i):
    """The i-th value (row-major) of every initializer: small, varied and exact in float32."""
    return ((i * 7) % 13 - 6) / 16.0


def init(name, dims):
    count = 1
    for d in dims:
        count *= d
    return helper.make_tensor(name, FLOAT, dims, [weight_value(i) for i in range(count)])


class Graph:
    """Nodes and initializers in the order an exporter writes them."""

    def __init__(self, weights_as_inputs=False):
        self.nodes, self.inits, self.weight_inputs = [], [], []
        self.weights_as_inputs = weights_as_inputs
        self.count = 0

    def weight(self, name, dims):
        if self.weights_as_inputs:
            self.weight_inputs.append(helper.make_tensor_value_info(name, FLOAT, dims))
        else:
            self.inits.append(init(name, dims))
        return name

    def node(self, op, inputs, name, outputs=1, **attrs):
        outs = [f"{name}_output_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0]

    def conv(self, x, module, cin, cout, k, stride=1, pad=0, bias=False, group=1):
        inputs = [x, self.weight(f"{module}.weight", [cout, cin // group, k, k])]
        if bias:
            inputs.append(self.weight(f"{module}.bias", [cout]))
        path = "/" + module.replace(".", "/")
        return self.node("Conv", inputs, f"{path}/Conv", kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, dilations=[1, 1], group=group)

    def bn(self, x, module, c):
        inputs = [x] + [self.weight(f"{module}.{p}", [c]) for p in ("weight", "bias", "running_mean", "running_var")]
        path = "/" + module.replace(".", "/")
        return self.node("BatchNormalization", inputs, f"{path}/BatchNormalization", outputs=3, epsilon=1e-5,
                         momentum=0.9, training_mode=1)

    def relu(self, x, path):
        return self.node("Relu", [x], f"{path}/Relu")

    def gemm(self, x, module, fin, fout):
        inputs = [x, self.weight(f"{module}.weight", [fout, fin]), self.weight(f"{module}.bias", [fout])]
        return self.node("Gemm", inputs, f"/{module}/Gemm", alpha=1.0, beta=1.0, transB=1)

    def model(self, x_dims, out, out_dims, opset=14, name="main_graph"):
        x = helper.make_tensor_value_info("input", FLOAT, x_dims)
        y = helper.make_tensor_value_info(out, FLOAT, out_dims)
        graph = helper.make_graph(self.nodes, name, [x] + self.weight_inputs, [y], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="pytorch", producer_version="1.13.1")
        model.ir_version = 8
        return model


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


def tiny_graph(g, log_softmax=False):
    """3x8x8 input: conv+bn+relu, a max pool, two branches (concat), a residual add, an
    average pool with padding counted, an identity pool, global pooling, flatten, dropout
    and two fully connected layers."""
    x = g.relu(g.bn(g.conv("input", "conv1", 3, 4, 3, pad=1), "bn1", 4), "/relu")
    x = g.node("MaxPool", [x], "/maxpool/MaxPool", kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0],
               ceil_mode=0)
    a = g.conv(x, "branch_a", 4, 2, 1, bias=True)
    b = g.relu(g.conv(x, "branch_b", 4, 2, 3, pad=1, bias=True), "/branch_b_relu")
    x = g.node("Concat", [a, b], "/Concat", axis=1)
    y = g.bn(g.conv(x, "block.conv", 4, 4, 3, pad=1), "block.bn", 4)
    x = g.relu(g.node("Add", [y, x], "/block/Add"), "/block/relu")
    x = g.node("AveragePool", [x], "/pool/AveragePool", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
               count_include_pad=1, ceil_mode=0)
    x = g.node("AveragePool", [x], "/adaptive/AveragePool", kernel_shape=[1, 1], strides=[1, 1])
    x = g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")
    x = g.node("Flatten", [x], "/Flatten", axis=1)
    ratio = g.node("Constant", [], "/dropout/Constant", value=helper.make_tensor("r", FLOAT, [], [0.5]))
    mode = g.node("Constant", [], "/dropout/Constant_1",
                  value=helper.make_tensor("t", TensorProto.BOOL, [], [True]))
    x = g.node("Dropout", [x, ratio, mode], "/dropout/Dropout", outputs=2)
    x = g.relu(g.gemm(x, "fc1", 4, 6), "/fc1_relu")
    x = g.node("Identity", [x], "/Identity")
    x = g.gemm(x, "fc2", 6, 5)
    if log_softmax:
        x = g.node("LogSoftmax", [x], "/LogSoftmax", axis=1)
    return x


def tiny(log_softmax=False, opset=14):
    g = Graph()
    out = tiny_graph(g, log_softmax)
    return g.model(["batch_size", 3, 8, 8], out, ["batch_size", 5], opset=opset)


def scalar(g, name, value):
    """A float scalar from a Constant node, as PyTorch exports Clip's bounds."""
    return g.node("Constant", [], name, value=helper.make_tensor("v", FLOAT, [], [value]))


def mobilenet():
    g = Graph()
    x = g.conv("input", "features.0.0", 3, 8, 3, pad=1)
    path = "/features/features.0/features.0.1/BatchNormalization"
    inputs = [x] + [g.weight(f"features.0.1.{p}", [8]) for p in ("weight", "bias", "running_mean", "running_var")]
    x = g.node("BatchNormalization", inputs, path, outputs=3, epsilon=1e-3, momentum=0.99, training_mode=1)
    block = g.node("HardSwish", [x], "/features/features.0/features.0.2/HardSwish")
    s = g.node("GlobalAveragePool", [block], "/se/avgpool/GlobalAveragePool")
    s = g.relu(g.conv(s, "se.fc1", 8, 4, 1, bias=True), "/se/relu")
    s = g.conv(s, "se.fc2", 4, 8, 1, bias=True)
    s = g.node("HardSigmoid", [s], "/se/scale_activation/HardSigmoid", alpha=1.0 / 6, beta=0.5)
    x = g.node("Mul", [s, block], "/se/Mul")  # the scale first: layerplan puts it second
    lo, hi = scalar(g, "/relu6/Constant", 0.0), scalar(g, "/relu6/Constant_1", 6.0)
    x = g.node("Clip", [x, lo, hi], "/relu6/Clip")
    y = g.conv(x, "conv2", 8, 8, 3, pad=1)
    sig = g.node("Sigmoid", [y], "/silu/Sigmoid")
    x = g.node("Mul", [y, sig], "/silu/Mul")
    gate = g.node("Sigmoid", [y], "/gate/Sigmoid")  # multiplies another tensor: its own layer
    x = g.node("Mul", [x, gate], "/gate/Mul")
    x = g.node("Clip", [x, "", scalar(g, "/clip/Constant", 2.5)], "/clip/Clip")
    x = g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")
    x = g.node("Flatten", [x], "/Flatten", axis=1)
    ratio = scalar(g, "/dropout/Constant", 0.2)
    mode = g.node("Constant", [], "/dropout/Constant_1",
                  value=helper.make_tensor("t", TensorProto.BOOL, [], [True]))
    x = g.node("Dropout", [x, ratio, mode], "/dropout/Dropout", outputs=2)
    x = g.gemm(x, "fc", 8, 5)
    return g.model(["batch_size", 3, 8, 8], x, ["batch_size", 5])


def pads(g, x, name, h, w):
    """Pad with zeros, pads from a Constant node, as PyTorch exports F.pad or a padded avg_pool2d."""
    value = helper.make_tensor("pads", TensorProto.INT64, [8], [0, 0, h, w, 0, 0, h, w])
    p = g.node("Constant", [], f"{name}/Constant", value=value)
    return g.node("Pad", [x, p], f"{name}/Pad", mode="constant")


def padded():
    """Pad + AveragePool (PyTorch's export of avg_pool2d(3, 1, padding=1)) and Pad + Conv."""
    g = Graph()
    x = pads(g, "input", "/pool", 1, 1)
    x = g.node("AveragePool", [x], "/pool/AveragePool", kernel_shape=[3, 3], strides=[1, 1], pads=[0, 0, 0, 0])
    x = pads(g, x, "/conv", 2, 1)
    x = g.conv(x, "conv", 3, 4, 3, pad=0, bias=True)
    x = g.node("Flatten", [x], "/Flatten")
    x = g.gemm(x, "fc", 4 * 10 * 8, 5)
    return g.model(["batch_size", 3, 8, 8], x, ["batch_size", 5])


def pad_into_max_pool():
    g = Graph()
    x = pads(g, "input", "/pool", 1, 1)
    x = g.node("MaxPool", [x], "/pool/MaxPool", kernel_shape=[3, 3])
    x = g.node("Flatten", [x], "/Flatten")
    return g.model(["N", 3, 8, 8], x, ["N", 192])


def folded():
    g = Graph()
    x = g.conv("input", "onnx::Conv", 3, 4, 3, pad=1, bias=True)
    g.nodes[-1].name = "/conv1/Conv"
    x = g.relu(x, "/relu")
    x = g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")
    x = g.node("Flatten", [x], "/Flatten")
    x = g.gemm(x, "fc", 4, 5)
    for t in g.inits[:2]:
        t.name = {"onnx::Conv.weight": "onnx::Conv_21", "onnx::Conv.bias": "onnx::Conv_22"}[t.name]
    g.nodes[0].input[1:] = ["onnx::Conv_21", "onnx::Conv_22"]
    return g.model([1, 3, 8, 8], x, [1, 5])


def grouped():
    """A MobileNet-style block: 1x1 conv, depthwise 3x3 (group 8), a 3x3 stride-2 conv of
    group 2 with bias, global pooling and a fully connected layer."""
    g = Graph()
    x = g.relu(g.bn(g.conv("input", "features.0", 4, 8, 1), "features.1", 8), "/features/relu")
    x = g.relu(g.bn(g.conv(x, "features.2", 8, 8, 3, pad=1, group=8), "features.3", 8), "/features/relu_1")
    x = g.conv(x, "features.4", 8, 6, 3, stride=2, pad=1, bias=True, group=2)
    x = g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")
    x = g.node("Flatten", [x], "/Flatten", axis=1)
    x = g.gemm(x, "fc", 6, 5)
    return g.model(["batch_size", 4, 8, 8], x, ["batch_size", 5])


def resnet50():
    """torchvision.models.resnet50 as exported in training mode, weights without values."""
    g = Graph(weights_as_inputs=True)
    x = g.relu(g.bn(g.conv("input", "conv1", 3, 64, 7, stride=2, pad=3), "bn1", 64), "/relu")
    x = g.node("MaxPool", [x], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, blocks in enumerate([3, 4, 6, 3]):
        planes = 64 << stage
        for b in range(blocks):
            p = f"layer{stage + 1}.{b}"
            path = f"/layer{stage + 1}/{p}"
            stride = 2 if b == 0 and stage > 0 else 1
            y = g.relu(g.bn(g.conv(x, f"{p}.conv1", cin, planes, 1), f"{p}.bn1", planes), f"{path}/relu")
            y = g.relu(g.bn(g.conv(y, f"{p}.conv2", planes, planes, 3, stride, 1), f"{p}.bn2", planes),
                       f"{path}/relu_1")
            y = g.bn(g.conv(y, f"{p}.conv3", planes, planes * 4, 1), f"{p}.bn3", planes * 4)
            shortcut = x
            if b == 0:
                shortcut = g.bn(g.conv(x, f"{p}.downsample.0", cin, planes * 4, 1, stride), f"{p}.downsample.1",
                                planes * 4)
            x = g.relu(g.node("Add", [y, shortcut], f"{path}/Add"), f"{path}/relu_2")
            cin = planes * 4
    x = g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")
    x = g.node("Flatten", [x], "/Flatten", axis=1)
    x = g.gemm(x, "fc", 2048, 1000)
    return g.model(["batch_size", 3, 224, 224], x, ["batch_size", 1000])


def small(op_nodes, out_dims, x_dims=None, opset=14, weights=()):
    """A one- or two-node graph for a refusal."""
    g = Graph()
    for name, dims in weights:
        g.weight(name, dims)
    out = "input"
    seen = {}
    for op, inputs, attrs in op_nodes:
        k = seen[op] = seen.get(op, -1) + 1
        name = f"/{op.lower()}/{op}" if k == 0 else f"/{op.lower()}_{k}/{op}"
        out = g.node(op, [out if i == "$" else i for i in inputs], name, **attrs)
    return g.model(x_dims or ["N", 3, 8, 8], out, out_dims, opset=opset)


def refusals():
    conv_w = [("w.weight", [4, 3, 3, 3])]
    flat = ("Flatten", ["$"], {})
    yield "bad_opset12.onnx", small([flat], ["N", 192], opset=12), True
    yield "bad_fixed_batch.onnx", small([flat], [3, 192], x_dims=[3, 3, 8, 8]), True
    yield "bad_dynamic_hw.onnx", small([flat], ["N", None], x_dims=["N", 3, "height", "width"]), True
    yield "bad_init_shape.onnx", small([("Conv", ["input", "w.weight"], {"kernel_shape": [3, 3]}), flat],
                                       ["N", 144], weights=[("w.weight", [4, 2, 3, 3])]), False
    yield "bad_group.onnx", small([("Conv", ["input", "w.weight"], {"group": 2}), flat], ["N", 144],
                                  weights=[("w.weight", [4, 1, 3, 3])]), True
    yield "bad_tanh.onnx", small([("Tanh", ["input"], {}), flat], ["N", 192]), True
    yield "bad_mul_shape.onnx", small([("MaxPool", ["input"], {"kernel_shape": [8, 1]}), ("Mul", ["input", "$"], {}),
                                       flat], ["N", 192]), True
    yield "bad_clip_computed.onnx", small([("Relu", ["input"], {}), ("Clip", ["input", "$"], {}), flat],
                                          ["N", 192]), True
    yield "bad_asymmetric_pads.onnx", small([("Conv", ["input", "w.weight"], {"pads": [1, 1, 0, 0]}), flat],
                                            ["N", 196], weights=conv_w), True
    yield "bad_dilation.onnx", small([("Conv", ["input", "w.weight"], {"dilations": [2, 2]}), flat], ["N", 64],
                                     weights=conv_w), True
    yield "bad_checker.onnx", small([("Conv", ["input"], {}), flat], ["N", 192]), False
    yield "bad_output_rank.onnx", small([("Relu", ["input"], {})], ["N", 3, 8, 8]), True
    cyc = small([("Relu", ["input"], {}), flat], ["N", 192])
    cyc.graph.node[0].input[0] = cyc.graph.node[1].output[0]  # Relu reads Flatten, which reads Relu
    cyc.graph.node[1].op_type = "Relu"
    yield "bad_cycle.onnx", cyc, False
    after = small([("Relu", ["input"], {}), ("Relu", ["$"], {}), ("Relu", ["$"], {})], ["N", 3, 8, 8])
    a, b, c = after.graph.node
    b.input[0] = c.output[0]  # b and c read each other; a, listed first, reads b
    a.input[0] = b.output[0]
    for node, name in zip((a, b, c), ("/first", "/loop_b", "/loop_c")):
        node.name = name
    after.graph.output[0].name = a.output[0]
    yield "bad_cycle_downstream.onnx", after, False
    ext = small([("Conv", ["input", "w.weight"], {}), flat], ["N", 144], weights=conv_w)
    t = ext.graph.initializer[0]
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    yield "bad_external_data.onnx", ext, False


def pool_modes():
    """ceil_mode windows that overhang the border, and an average without the padding."""
    g = Graph()
    x = g.conv("input", "conv", 3, 4, 3, pad=1)
    x = g.node("MaxPool", [x], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0],
               ceil_mode=1)  # 8x10 -> 4x5 (3x4 rounding down)
    # avg_pool2d(3, 2, padding=1, ceil_mode=True) counting padding, as PyTorch exports it
    x = g.node("AveragePool", [pads(g, x, "/avgpool", 1, 1)], "/avgpool/AveragePool", kernel_shape=[3, 3],
               strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=1)  # -> 3x3
    x = g.node("AveragePool", [x], "/smooth/AveragePool", kernel_shape=[3, 3], strides=[1, 1],
               pads=[1, 1, 1, 1], ceil_mode=0, count_include_pad=0)
    x = g.node("Flatten", [x], "/Flatten", axis=1)
    x = g.gemm(x, "fc", 36, 5)
    return g.model(["batch_size", 3, 8, 10], x, ["batch_size", 5])


def linear():
    """Reshape (N,2,4,4) -> (N,32); Gemm with transB 0; MatMul(x, Transpose(w)) + Add(b, .),
    as PyTorch exports F.linear without Gemm; MatMul by an [in, out] initializer."""
    g = Graph()
    x = g.conv("input", "conv", 3, 2, 1)
    shape = g.node("Constant", [], "/Constant", value=helper.make_tensor("s", TensorProto.INT64, [2], [0, -1]))
    x = g.node("Reshape", [x, shape], "/Reshape")
    inputs = [x, g.weight("fc1.weight", [32, 6]), g.weight("fc1.bias", [6])]
    x = g.relu(g.node("Gemm", inputs, "/fc1/Gemm", alpha=1.0, beta=1.0, transB=0), "/fc1_relu")
    wt = g.node("Transpose", [g.weight("fc2.weight", [5, 6])], "/fc2/Transpose", perm=[1, 0])
    x = g.node("MatMul", [x, wt], "/fc2/MatMul")
    x = g.relu(g.node("Add", [g.weight("fc2.bias", [5]), x], "/fc2/Add"), "/fc2_relu")
    return g.model(["batch_size", 3, 4, 4], g.node("MatMul", [x, g.weight("onnx::MatMul_9", [5, 4])], "/fc3/MatMul"),
                   ["batch_size", 4])


def view_shape(g, x, name, dims):
    """The shape arithmetic of x.view(x.size(0), *dims), as torch 1.13 exports it."""
    def const(suffix, dims_, values):
        return g.node("Constant", [], f"{name}/Constant{suffix}",
                      value=helper.make_tensor("c", TensorProto.INT64, dims_, values))
    shape = g.node("Shape", [x], f"{name}/Shape")
    batch = g.node("Gather", [shape, const("", [], [0])], f"{name}/Gather", axis=0)
    parts = [g.node("Unsqueeze", [batch, const("_axes", [1], [0])], f"{name}/Unsqueeze")]
    for k, d in enumerate(dims):
        parts.append(g.node("Unsqueeze", [const(f"_{k}", [], [d]), const(f"_{k}_axes", [1], [0])],
                            f"{name}/Unsqueeze_{k + 1}"))
    return g.node("Concat", parts, f"{name}/Concat", axis=0)


def view():
    g = Graph()
    x = g.conv("input", "conv", 3, 2, 3, pad=1)
    x = g.node("Reshape", [x, view_shape(g, x, "", [-1])], "/Reshape", allowzero=0)
    return g.model(["batch_size", 3, 4, 4], g.gemm(x, "fc", 32, 5), ["batch_size", 5])


def pool_and_linear_refusals():
    flat = ("Flatten", ["$"], {})
    shape = helper.make_tensor("s", TensorProto.INT64, [2], [-1, 96])
    yield "bad_reshape.onnx", small([("Constant", [], {"value": shape}), ("Reshape", ["input", "$"], {})],
                                    ["M", 96]), True
    yield "bad_transpose.onnx", small([("Transpose", ["input"], {"perm": [0, 1, 3, 2]}), flat], ["N", 192]), True
    yield "bad_gemm_alpha.onnx", small([flat, ("Gemm", ["$", "w.weight"], {"alpha": 0.5, "transB": 1})], ["N", 5],
                                       weights=[("w.weight", [5, 192])]), True
    g = Graph()
    x = g.node("Reshape", ["input", view_shape(g, "input", "", [3, -1])], "/Reshape", allowzero=0)
    yield "bad_view.onnx", g.model(["N", 3, 8, 8], x, ["N", 3, 64]), True
    # An operator layerplan can neither train nor price: refused by name, before its shapes matter.
    yield "bad_lstm.onnx", small([("LSTM", ["input", "W", "R"], {"hidden_size": 4})], [8, 1, 3, 4],
                                 weights=[("W", [1, 16, 8]), ("R", [1, 16, 4])]), True


def main():
    save(tiny(), "tiny.onnx")
    save(tiny(log_softmax=True, opset=17), "tiny_softmax.onnx")
    unsorted = tiny()
    nodes = list(unsorted.graph.node)
    del unsorted.graph.node[:]
    unsorted.graph.node.extend(nodes[::-1])
    save(unsorted, "tiny_unsorted.onnx", check=False)
    save(folded(), "tiny_folded.onnx")
    save(padded(), "tiny_pad.onnx")
    save(pad_into_max_pool(), "bad_pad_max_pool.onnx")
    save(mobilenet(), "mobilenet.onnx")
    save(resnet50(), "resnet50.onnx")
    save(grouped(), "grouped_conv.onnx")
    for name, model, check in refusals():
        save(model, name, check)
    save(pool_modes(), "tiny_pool_modes.onnx")
    save(linear(), "tiny_linear.onnx")
    save(view(), "tiny_view.onnx")
    for name, model, check in pool_and_linear_refusals():
        save(model, name, check)


if __name__ == "__main__":
    main()
