#pragma once
// Built-in CNNs with the layer shapes of their torchvision definitions, so that their
// parameter counts equal torchvision's (LeNet-5, which torchvision lacks, follows LeCun et
// al. 1998 with a full C3 connection table). Inception-v3 is built without the auxiliary
// classifier (torchvision's aux_logits=False), since the auxiliary head is dropped
// after training and does not change how the trunk is parallelized.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_graph.h"

namespace layerplan {

// lenet5, alexnet, vgg16, resnet50, resnet101, inception_v3 (in that order).
const std::vector<std::string>& zoo_model_names();

// Builds the named model for a global batch of `batch` images. Throws UsageError for an
// unknown name (the message lists the known ones) or a batch below 1.
ModelGraph build_zoo_model(std::string_view name, int64_t batch);

ModelGraph lenet5(int64_t batch);        // 1x32x32 input, 10 classes
ModelGraph alexnet(int64_t batch);       // torchvision variant, 3x224x224, 1000 classes
ModelGraph vgg16(int64_t batch);         // configuration D without batch-norm, 3x224x224
ModelGraph resnet50(int64_t batch);      // bottleneck blocks [3, 4, 6, 3], 3x224x224
ModelGraph resnet101(int64_t batch);     // bottleneck blocks [3, 4, 23, 3], 3x224x224
ModelGraph inception_v3(int64_t batch);  // 3x299x299, no auxiliary classifier

}  // namespace layerplan
