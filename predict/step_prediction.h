#pragma once
// What `layerplan predict` reports of a plan: one training step's time on this machine,
// its compute as measured (predict/measurement.h) and its communication as priced
// (predict/step_pricer.h), in total and per layer.
#include <cstddef>
#include <string>
#include <vector>

namespace layerplan {

struct LayerPrediction {
  std::string layer;      // the layer's name
  double compute_s = 0;   // measured: forward, backward and SGD on its slowest device
  double forward_s = 0;   // the forward part of compute_s
  double transfer_s = 0;  // priced: its input edges' moves, both ways, bytes and messages
  double sync_s = 0;      // priced: its batch-norm statistics' reductions, both ways
  double messages = 0;    // those of its input edges and its statistics
};

struct StepPrediction {
  std::vector<LayerPrediction> layers;  // in the graph's order
  double step_s = 0;                    // compute + overhead + data + transfer + sync
  double compute_s = 0;                 // the layers' compute
  double overhead_s = 0;                // measured: the executor's work outside the kernels
  double data_s = 0;                    // measured: making the busiest device's part of the batch
  double transfer_s = 0;                // the layers' transfers
  double sync_s = 0;                    // the layers' statistics, the weight gradients and the loss
  double weight_sync_s = 0;             // the gradient buckets' rings (with overlap: the part after the backward)
  double weight_sync_hidden_s = 0;      // with overlap: the rings' time while the backward went on
  bool overlap = false;                 // the rings priced overlapping the backward
  double loss_sync_s = 0;               // the loss's reduction among the devices the plan uses
  size_t buckets = 0;                   // gradient buckets all-reduced per step
  double messages = 0;                  // every message priced
};

}  // namespace layerplan
