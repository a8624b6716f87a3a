#pragma once
// Which configurations the search considers for a layer on a job of N nodes x G GPUs
// (D = N*G devices, numbered node-major). The pruning rules (docs/planner.md explains
// why each keeps the optimum worth having, or where it restricts it):
//  1. only the dimensions a layer kind can be split along (splittable_dims, model/layer_math.h);
//  2. every degree divides the dimension's extent, so tiles are equal boxes;
//  3. the tile count p must be placeable on the job: p divides G (a block inside one
//     node), or p is a multiple of G that divides D (a block of whole nodes). A layer
//     may use fewer devices than the job. When D and G are powers of two these are all
//     powers of two up to D;
//  4. tiles go to an aligned block of p consecutive devices, devices b*p ... b*p+p-1.
//     By rule 3 such a block either lies inside one node or is a run of whole nodes.
//     kAlignedBlocks keeps every one of the D/p blocks; kFirstBlock (the default) keeps
//     only the block that starts at device 0. kFirstBlock is a restriction: two layers
//     on fewer devices than the job may do better on different blocks, e.g. to spread
//     what they receive over several nodes' NICs. It divides the space by up to the
//     device count, which is what makes 64-256 GPUs tractable;
//  5. D and G are at least 1 and D is a multiple of G;
//  6. on jobs of more than kNodeRunsUpToDevices devices (by default), a layer on a run of
//     some but not all of the nodes splits across them by samples only: its tiles per
//     sample block (c*h*w degrees) divide G, so every sample block lies in one node. A
//     restriction (docs/planner.md) that keeps the search at 1024 GPUs within seconds.
#include <array>
#include <vector>

#include "model/geometry.h"
#include "model/layer_math.h"
#include "model/model_graph.h"
#include "planner/deadline.h"

namespace layerplan {

enum class PlacementRule { kFirstBlock, kAlignedBlocks };

// Rule 6: how a layer may split over a run of some of the nodes. kAuto is kAnySplit on
// jobs of up to kNodeRunsUpToDevices devices and kBySamples above.
enum class NodeRuns { kAuto, kAnySplit, kBySamples };
inline constexpr int kNodeRunsUpToDevices = 256;

struct SpaceOptions {
  PlacementRule placement = PlacementRule::kFirstBlock;
  NodeRuns node_runs = NodeRuns::kAuto;
};

// Rules 3 and 6: whether the search considers these degrees on this job.
bool allowed_degrees(const Degrees& degrees, int device_count, int gpus_per_node, const SpaceOptions& options);

// Rule 3: whether `tiles` tiles can be placed on an aligned block of a job of
// device_count GPUs in nodes of gpus_per_node.
bool placeable_tile_count(int tiles, int device_count, int gpus_per_node);

// All degree vectors allowed by rules 1-3, ordered by tile count, then in depth-first
// order over n, c, h, w with ascending degrees. The two-argument form is one node of
// device_count GPUs (every divisor of device_count is placeable).
std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count, int gpus_per_node);
std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count);
// The same, charging `deadline` for the work (it throws DeadlinePassed when it has passed).
std::vector<Degrees> candidate_degrees(const Layer& layer, int device_count, int gpus_per_node, Deadline& deadline);

// Rule 5: throws UsageError naming the value unless device_count and gpus_per_node are
// at least 1 and device_count is a multiple of gpus_per_node.
void require_job_shape(int device_count, int gpus_per_node);

// Rules 1-4 and 6. Throws UsageError as require_job_shape does.
std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count, int gpus_per_node,
                                                    const SpaceOptions& options);
std::vector<Configuration> enumerate_configurations(const Layer& layer, int device_count, int gpus_per_node,
                                                    const SpaceOptions& options, Deadline& deadline);

bool is_power_of_two(int64_t value);

}  // namespace layerplan
