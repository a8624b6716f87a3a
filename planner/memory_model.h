#pragma once
// Predicted peak memory of every device for a plan: what the executor (runtime/executor)
// allocates on a device, in the order it allocates and frees it, during construction and
// one training step after the first (when SGD momentum exists). docs/cost-model.md
// ("Memory per device") lists what is counted and what is not.
//
// Two uses:
//  - predict_plan_memory(): the whole plan, device by device (reported beside the time and
//    checked against each GPU's usable memory after the search);
//  - layer_memory_lower_bound(): what one layer's tile alone needs on its device, whatever
//    the other layers do. The search excludes configurations whose bound exceeds the usable
//    memory: no plan containing them can fit.
#include <cstdint>
#include <vector>

#include "model/geometry.h"
#include "model/model_graph.h"
#include "topology/device_graph.h"

namespace layerplan {

// Weight gradients are all-reduced in buckets of this size (runtime/executor/
// gradient_buckets.h, PyTorch DDP's default).
inline constexpr int64_t kGradientBucketBytes = int64_t{25} << 20;

struct MemoryModelOptions {
  int64_t bucket_bytes = kGradientBucketBytes;
  bool momentum = true;  // SGD with momentum keeps one buffer per parameter
};

// One device's predicted memory, in bytes.
struct DeviceMemory {
  int64_t peak = 0;         // the largest total at any point of construction or the step
  int64_t parameters = 0;   // weight and bias shards, batch-norm running statistics
  int64_t momentum = 0;     // SGD momentum buffers
  int64_t workspace = 0;    // the kernels' layout-conversion buffers, sized by the largest convolution
  int64_t activations = 0;  // kept for the backward at the end of the forward (outputs, gathered inputs)
};

struct PlanMemory {
  std::vector<DeviceMemory> devices;  // indexed by device id, every device of the job
  int64_t peak() const;               // the largest device peak
  int peak_device() const;            // the device with that peak (the lowest id among equals)
};

// `plan` holds one configuration per layer; device_count is the job's device count (at
// least one more than any device the plan names). Element size: device.bytes_per_element.
PlanMemory predict_plan_memory(const ModelGraph& graph, const std::vector<Configuration>& plan, int device_count,
                               int64_t bytes_per_element, const MemoryModelOptions& options = {});

// A lower bound of the peak memory of any device that computes a tile of `layer` under
// `config`, whatever the other layers' configurations: during the layer's backward the
// device holds the layer's parameter shard, its momentum and weight gradient, its output
// and output gradient, its saved inputs and their gradients, and for a convolution the
// layout buffers of its own operands.
int64_t layer_memory_lower_bound(const ModelGraph& graph, const Layer& layer, const Configuration& config,
                                 int64_t bytes_per_element, const MemoryModelOptions& options = {});

// What one tile of `layer` under `config` keeps from the forward to the end of the backward
// or for good: its parameter shard, momentum, output and inputs (as if gathered, which
// counts an input read in place twice). Summed over the layers of a plan it estimates the
// memory of a device that holds a tile of every layer (device 0 under first-block placement).
int64_t layer_resident_bytes(const ModelGraph& graph, const Layer& layer, const Configuration& config,
                             int64_t bytes_per_element, const MemoryModelOptions& options = {});

// What the transport holds at once, per device, while one edge (consumer, input slot)
// moves between two configurations: the regions a device's consumer tile receives plus
// the copies its producer tile sends, in elements. Computed from per-dimension sums: the
// regions and tiles are products of intervals over a full grid of tile coordinates.
std::vector<int64_t> exchange_elements(const ModelGraph& graph, const Layer& consumer, int slot,
                                       const Configuration& producer, const Configuration& consumer_config,
                                       int device_count);

// What a plan may use of one device: its memory less the reserve (docs/cost-model.md).
int64_t usable_memory_bytes(const Device& device);

}  // namespace layerplan
