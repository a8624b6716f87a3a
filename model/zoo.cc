#include "model/zoo.h"

#include <array>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/limits.h"

namespace layerplan {

namespace {

using Builder = ModelGraph (*)(int64_t batch);

struct ZooEntry {
  const char* name;
  Builder build;
};

// The one list of built-in models; zoo_model_names() and build_zoo_model() read it.
const std::array<ZooEntry, 6>& zoo_entries() {
  static const std::array<ZooEntry, 6> entries = {{
      {"lenet5", &lenet5},
      {"alexnet", &alexnet},
      {"vgg16", &vgg16},
      {"resnet50", &resnet50},
      {"resnet101", &resnet101},
      {"inception_v3", &inception_v3},
  }};
  return entries;
}

// The "input" layer of a square image batch; rejects batches below 1.
int image_input(ModelGraph& g, int64_t batch, int64_t channels, int64_t size) {
  require(batch >= 1 && batch <= kMaxBatch,
          "batch " + std::to_string(batch) + ": expected 1 to " + std::to_string(kMaxBatch) + " images");
  return g.input("input", Shape{{batch, channels, size, size}});
}

// Asymmetric kernels of Inception-v3, padded to keep the spatial size.
constexpr Window k1x3 = {1, 3, 1, 1, 0, 1};
constexpr Window k3x1 = {3, 1, 1, 1, 1, 0};
constexpr Window k1x7 = {1, 7, 1, 1, 0, 3};
constexpr Window k7x1 = {7, 1, 1, 1, 3, 0};

// ---- AlexNet and VGG: plain convolutions with bias, then relu ----------------------

// "conv<suffix>" then "relu<suffix>".
int conv_relu(ModelGraph& g, const std::string& suffix, int in, int out, Window w) {
  const int conv = g.conv2d("conv" + suffix, in, out, w, true);
  return g.relu("relu" + suffix, conv);
}

// "fc<suffix>" then "relu<suffix>".
int fc_relu(ModelGraph& g, const std::string& suffix, int in, int out) {
  const int fc = g.fully_connected("fc" + suffix, in, out);
  return g.relu("relu" + suffix, fc);
}

// ---- ResNet ------------------------------------------------------------------------

// Convolution without bias followed by batch norm.
int conv_bn(ModelGraph& g, const std::string& conv_name, const std::string& bn_name, int in, int out, Window w) {
  const int conv = g.conv2d(conv_name, in, out, w, false);
  return g.batch_norm(bn_name, conv);
}

// torchvision's Bottleneck (v1.5: the stride sits on the 3x3 convolution). The shortcut
// is a strided 1x1 convolution plus batch norm whenever the shape changes.
int bottleneck(ModelGraph& g, const std::string& p, int in, int planes, int stride) {
  const int out_channels = 4 * planes;
  int x = conv_bn(g, p + ".conv1", p + ".bn1", in, planes, Window::square(1));
  x = g.relu(p + ".relu1", x);
  x = conv_bn(g, p + ".conv2", p + ".bn2", x, planes, Window::square(3, stride, 1));
  x = g.relu(p + ".relu2", x);
  x = conv_bn(g, p + ".conv3", p + ".bn3", x, out_channels, Window::square(1));
  int shortcut = in;
  if (stride != 1 || g.layer(in).output.c() != out_channels) {
    shortcut = conv_bn(g, p + ".downsample.conv", p + ".downsample.bn", in, out_channels, Window::square(1, stride));
  }
  const int sum = g.add(p + ".add", {x, shortcut});
  return g.relu(p + ".relu3", sum);
}

// Bottleneck ResNet with blocks[i] blocks in stage "layer<i+1>".
ModelGraph resnet(const std::string& name, int64_t batch, const std::array<int, 4>& blocks) {
  ModelGraph g(name);
  int x = image_input(g, batch, 3, 224);
  x = g.relu("relu", conv_bn(g, "conv1", "bn1", x, 64, Window::square(7, 2, 3)));
  x = g.max_pool("maxpool", x, Window::square(3, 2, 1));
  for (int stage = 0; stage < 4; ++stage) {
    const int planes = 64 << stage;
    const std::string layer = "layer" + std::to_string(stage + 1);
    for (int b = 0; b < blocks[static_cast<size_t>(stage)]; ++b) {
      const int stride = (b == 0 && stage > 0) ? 2 : 1;
      x = bottleneck(g, layer + "." + std::to_string(b), x, planes, stride);
    }
  }
  x = g.global_avg_pool("avgpool", x);
  x = g.flatten("flatten", x);
  x = g.fully_connected("fc", x, 1000);
  g.softmax_cross_entropy("loss", x);
  return g;
}

// ---- Inception-v3 ------------------------------------------------------------------

// torchvision's BasicConv2d: convolution without bias, batch norm (its epsilon is 1e-3,
// not PyTorch's default), relu.
int basic_conv(ModelGraph& g, const std::string& name, int in, int out, Window w) {
  constexpr double kBasicConvEpsilon = 1e-3;
  const int conv = g.conv2d(name + ".conv", in, out, w, false);
  const int bn = g.batch_norm(name + ".bn", conv, kBasicConvEpsilon);
  return g.relu(name + ".relu", bn);
}

// 3x3 average pool (stride 1, padding 1) then a 1x1 BasicConv2d.
int avg_pool_branch(ModelGraph& g, const std::string& p, int in, int out) {
  const int pool = g.avg_pool(p + ".avg_pool", in, Window::square(3, 1, 1));
  return basic_conv(g, p + ".branch_pool", pool, out, Window::square(1));
}

int inception_a(ModelGraph& g, const std::string& p, int in, int pool_features) {
  const int b1 = basic_conv(g, p + ".branch1x1", in, 64, Window::square(1));
  int b5 = basic_conv(g, p + ".branch5x5_1", in, 48, Window::square(1));
  b5 = basic_conv(g, p + ".branch5x5_2", b5, 64, Window::square(5, 1, 2));
  int b3 = basic_conv(g, p + ".branch3x3dbl_1", in, 64, Window::square(1));
  b3 = basic_conv(g, p + ".branch3x3dbl_2", b3, 96, Window::square(3, 1, 1));
  b3 = basic_conv(g, p + ".branch3x3dbl_3", b3, 96, Window::square(3, 1, 1));
  const int bp = avg_pool_branch(g, p, in, pool_features);
  return g.concat(p, {b1, b5, b3, bp});
}

int inception_b(ModelGraph& g, const std::string& p, int in) {
  const int b3 = basic_conv(g, p + ".branch3x3", in, 384, Window::square(3, 2));
  int bd = basic_conv(g, p + ".branch3x3dbl_1", in, 64, Window::square(1));
  bd = basic_conv(g, p + ".branch3x3dbl_2", bd, 96, Window::square(3, 1, 1));
  bd = basic_conv(g, p + ".branch3x3dbl_3", bd, 96, Window::square(3, 2));
  const int bp = g.max_pool(p + ".max_pool", in, Window::square(3, 2));
  return g.concat(p, {b3, bd, bp});
}

int inception_c(ModelGraph& g, const std::string& p, int in, int c7) {
  const int b1 = basic_conv(g, p + ".branch1x1", in, 192, Window::square(1));
  int b7 = basic_conv(g, p + ".branch7x7_1", in, c7, Window::square(1));
  b7 = basic_conv(g, p + ".branch7x7_2", b7, c7, k1x7);
  b7 = basic_conv(g, p + ".branch7x7_3", b7, 192, k7x1);
  int bd = basic_conv(g, p + ".branch7x7dbl_1", in, c7, Window::square(1));
  bd = basic_conv(g, p + ".branch7x7dbl_2", bd, c7, k7x1);
  bd = basic_conv(g, p + ".branch7x7dbl_3", bd, c7, k1x7);
  bd = basic_conv(g, p + ".branch7x7dbl_4", bd, c7, k7x1);
  bd = basic_conv(g, p + ".branch7x7dbl_5", bd, 192, k1x7);
  const int bp = avg_pool_branch(g, p, in, 192);
  return g.concat(p, {b1, b7, bd, bp});
}

int inception_d(ModelGraph& g, const std::string& p, int in) {
  int b3 = basic_conv(g, p + ".branch3x3_1", in, 192, Window::square(1));
  b3 = basic_conv(g, p + ".branch3x3_2", b3, 320, Window::square(3, 2));
  int b7 = basic_conv(g, p + ".branch7x7x3_1", in, 192, Window::square(1));
  b7 = basic_conv(g, p + ".branch7x7x3_2", b7, 192, k1x7);
  b7 = basic_conv(g, p + ".branch7x7x3_3", b7, 192, k7x1);
  b7 = basic_conv(g, p + ".branch7x7x3_4", b7, 192, Window::square(3, 2));
  const int bp = g.max_pool(p + ".max_pool", in, Window::square(3, 2));
  return g.concat(p, {b3, b7, bp});
}

// The 1x3 and 3x1 halves of each split branch feed the block's one concat directly.
int inception_e(ModelGraph& g, const std::string& p, int in) {
  const int b1 = basic_conv(g, p + ".branch1x1", in, 320, Window::square(1));
  const int b3 = basic_conv(g, p + ".branch3x3_1", in, 384, Window::square(1));
  const int b3a = basic_conv(g, p + ".branch3x3_2a", b3, 384, k1x3);
  const int b3b = basic_conv(g, p + ".branch3x3_2b", b3, 384, k3x1);
  int bd = basic_conv(g, p + ".branch3x3dbl_1", in, 448, Window::square(1));
  bd = basic_conv(g, p + ".branch3x3dbl_2", bd, 384, Window::square(3, 1, 1));
  const int bda = basic_conv(g, p + ".branch3x3dbl_3a", bd, 384, k1x3);
  const int bdb = basic_conv(g, p + ".branch3x3dbl_3b", bd, 384, k3x1);
  const int bp = avg_pool_branch(g, p, in, 192);
  return g.concat(p, {b1, b3a, b3b, bda, bdb, bp});
}

// The stem of Inception-v3: 3x299x299 down to 192x35x35.
int inception_stem(ModelGraph& g, int x) {
  x = basic_conv(g, "Conv2d_1a_3x3", x, 32, Window::square(3, 2));
  x = basic_conv(g, "Conv2d_2a_3x3", x, 32, Window::square(3));
  x = basic_conv(g, "Conv2d_2b_3x3", x, 64, Window::square(3, 1, 1));
  x = g.max_pool("maxpool1", x, Window::square(3, 2));
  x = basic_conv(g, "Conv2d_3b_1x1", x, 80, Window::square(1));
  x = basic_conv(g, "Conv2d_4a_3x3", x, 192, Window::square(3));
  return g.max_pool("maxpool2", x, Window::square(3, 2));
}

}  // namespace

const std::vector<std::string>& zoo_model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ZooEntry& e : zoo_entries()) out.emplace_back(e.name);
    return out;
  }();
  return names;
}

ModelGraph build_zoo_model(std::string_view name, int64_t batch) {
  for (const ZooEntry& e : zoo_entries()) {
    if (name == e.name) return e.build(batch);  // each builder rejects a batch below 1
  }
  std::string known;
  for (const std::string& n : zoo_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown model '" + std::string(name) + "': expected one of " + known);
}

ModelGraph lenet5(int64_t batch) {
  ModelGraph g("lenet5");
  int x = image_input(g, batch, 1, 32);
  x = g.relu("relu1", g.conv2d("conv1", x, 6, Window::square(5), true));
  x = g.max_pool("pool1", x, Window::square(2, 2));
  x = g.relu("relu2", g.conv2d("conv2", x, 16, Window::square(5), true));
  x = g.max_pool("pool2", x, Window::square(2, 2));
  x = g.flatten("flatten", x);
  x = g.relu("relu3", g.fully_connected("fc1", x, 120));
  x = g.relu("relu4", g.fully_connected("fc2", x, 84));
  x = g.fully_connected("fc3", x, 10);
  g.softmax_cross_entropy("loss", x);
  return g;
}

ModelGraph alexnet(int64_t batch) {
  ModelGraph g("alexnet");
  int x = image_input(g, batch, 3, 224);
  x = conv_relu(g, "1", x, 64, Window::square(11, 4, 2));
  x = g.max_pool("pool1", x, Window::square(3, 2));
  x = conv_relu(g, "2", x, 192, Window::square(5, 1, 2));
  x = g.max_pool("pool2", x, Window::square(3, 2));
  x = conv_relu(g, "3", x, 384, Window::square(3, 1, 1));
  x = conv_relu(g, "4", x, 256, Window::square(3, 1, 1));
  x = conv_relu(g, "5", x, 256, Window::square(3, 1, 1));
  x = g.max_pool("pool5", x, Window::square(3, 2));  // 256x6x6: the adaptive pool is a no-op
  x = g.flatten("flatten", x);
  x = fc_relu(g, "6", g.dropout("drop6", x), 4096);
  x = fc_relu(g, "7", g.dropout("drop7", x), 4096);
  x = g.fully_connected("fc8", x, 1000);
  g.softmax_cross_entropy("loss", x);
  return g;
}

ModelGraph vgg16(int64_t batch) {
  ModelGraph g("vgg16");
  int x = image_input(g, batch, 3, 224);
  constexpr std::array<int, 5> kConvs = {2, 2, 3, 3, 3};
  constexpr std::array<int, 5> kChannels = {64, 128, 256, 512, 512};
  for (size_t stage = 0; stage < kConvs.size(); ++stage) {
    const std::string s = std::to_string(stage + 1);
    for (int i = 1; i <= kConvs[stage]; ++i) {
      x = conv_relu(g, s + "_" + std::to_string(i), x, kChannels[stage], Window::square(3, 1, 1));
    }
    x = g.max_pool("pool" + s, x, Window::square(2, 2));
  }
  x = g.flatten("flatten", x);  // 512x7x7: the adaptive pool is a no-op
  x = g.dropout("drop6", fc_relu(g, "6", x, 4096));
  x = g.dropout("drop7", fc_relu(g, "7", x, 4096));
  x = g.fully_connected("fc8", x, 1000);
  g.softmax_cross_entropy("loss", x);
  return g;
}

ModelGraph resnet50(int64_t batch) { return resnet("resnet50", batch, {3, 4, 6, 3}); }

ModelGraph resnet101(int64_t batch) { return resnet("resnet101", batch, {3, 4, 23, 3}); }

ModelGraph inception_v3(int64_t batch) {
  ModelGraph g("inception_v3");
  int x = inception_stem(g, image_input(g, batch, 3, 299));
  x = inception_a(g, "Mixed_5b", x, 32);
  x = inception_a(g, "Mixed_5c", x, 64);
  x = inception_a(g, "Mixed_5d", x, 64);
  x = inception_b(g, "Mixed_6a", x);
  x = inception_c(g, "Mixed_6b", x, 128);
  x = inception_c(g, "Mixed_6c", x, 160);
  x = inception_c(g, "Mixed_6d", x, 160);
  x = inception_c(g, "Mixed_6e", x, 192);
  x = inception_d(g, "Mixed_7a", x);
  x = inception_e(g, "Mixed_7b", x);
  x = inception_e(g, "Mixed_7c", x);
  x = g.global_avg_pool("avgpool", x);
  x = g.dropout("dropout", x);
  x = g.flatten("flatten", x);
  x = g.fully_connected("fc", x, 1000);
  g.softmax_cross_entropy("loss", x);
  return g;
}

}  // namespace layerplan
