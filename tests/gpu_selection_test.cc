// Which GPUs a job has: SLURM_STEP_GPUS, then SLURM_JOB_GPUS, then CUDA_VISIBLE_DEVICES
// (indices, GPU-<uuid> and unique prefixes; MIG rejected), else all; every bad value is a
// UsageError naming the variable and value. Also restrict_gpus() and --gpus indices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "topology/discovery.h"
#include "topology/node_topology.h"

namespace layerplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Four GPUs in PCI bus-id order with UUIDs, linked a->b with gbytes 10a+b.
NodeTopology four_gpus() {
  NodeTopology node;
  node.origin = "test";
  const std::vector<std::string> uuids = {
      "GPU-1a2b0000-0000-0000-0000-000000000000", "GPU-1a2c0000-0000-0000-0000-000000000000",
      "GPU-77770000-0000-0000-0000-000000000000", "GPU-88880000-0000-0000-0000-000000000000"};
  for (int i = 0; i < 4; ++i) {
    GpuInfo gpu;
    gpu.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
    gpu.uuid = uuids[static_cast<size_t>(i)];
    node.gpus.push_back(gpu);
  }
  node.nvswitches.push_back(NvSwitchInfo{"0000:80:00.0", "switch"});
  node.nics.push_back(NicInfo{});
  node.links.resize(16);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      node.link(a, b) = GpuLink{a == b ? PathKind::kSelf : PathKind::kNvlink, 10.0 * a + b, Source::kNvml, a + b};
    }
  }
  node.notes.push_back("a note");
  return node;
}

GpuEnvironment cuda(const std::string& value) {
  GpuEnvironment env;
  env.cuda_visible_devices = value;
  env.cuda_visible_devices_set = true;
  return env;
}

// The UsageError message select_gpus throws, or a failure.
std::string selection_error(const GpuEnvironment& env) {
  try {
    select_gpus(four_gpus(), env);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError";
  return "";
}

TEST(SelectGpus, NoVariableMeansEveryGpu) {
  EXPECT_THAT(select_gpus(four_gpus(), GpuEnvironment{}), ElementsAre(0, 1, 2, 3));
}

TEST(SelectGpus, CudaVisibleDevicesIndicesInTheGivenOrder) {
  EXPECT_THAT(select_gpus(four_gpus(), cuda("2,0")), ElementsAre(2, 0));
  EXPECT_THAT(select_gpus(four_gpus(), cuda(" 1 , 3 ")), ElementsAre(1, 3));
}

TEST(SelectGpus, CudaVisibleDevicesFullUuidAndUniquePrefix) {
  EXPECT_THAT(select_gpus(four_gpus(), cuda("GPU-77770000-0000-0000-0000-000000000000")), ElementsAre(2));
  EXPECT_THAT(select_gpus(four_gpus(), cuda("GPU-8888,GPU-1a2c")), ElementsAre(3, 1));
  EXPECT_THAT(select_gpus(four_gpus(), cuda("gpu-1A2B")), ElementsAre(0));  // case as CUDA ignores it
}

TEST(SelectGpus, UuidPrefixMatchingTwoGpusIsRejected) {
  const std::string message = selection_error(cuda("GPU-1a2"));
  EXPECT_THAT(message, HasSubstr("CUDA_VISIBLE_DEVICES='GPU-1a2'"));
  EXPECT_THAT(message, HasSubstr("matches 2 GPUs"));
}

TEST(SelectGpus, UnknownUuidIsRejected) {
  const std::string message = selection_error(cuda("GPU-ffff"));
  EXPECT_THAT(message, HasSubstr("no GPU with UUID GPU-ffff"));
  EXPECT_THAT(message, HasSubstr("this node has 4 GPUs"));
}

TEST(SelectGpus, UuidWithoutUuidsInTheTopologyIsRejected) {
  NodeTopology node = four_gpus();
  for (GpuInfo& gpu : node.gpus) gpu.uuid.clear();
  try {
    select_gpus(node, cuda("GPU-1a2b"));
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the topology has no GPU UUIDs"));
  }
}

TEST(SelectGpus, MigInstancesAreRejected) {
  const std::string message = selection_error(cuda("MIG-4b6d2a0e-1111-2222-3333-444455556666"));
  EXPECT_THAT(message, HasSubstr("CUDA_VISIBLE_DEVICES='MIG-4b6d2a0e-1111-2222-3333-444455556666'"));
  EXPECT_THAT(message, HasSubstr("MIG instances are not supported"));
}

TEST(SelectGpus, AbsentIndexNamesItAndTheGpuCount) {
  const std::string message = selection_error(cuda("0,7"));
  EXPECT_EQ(message,
            "CUDA_VISIBLE_DEVICES='0,7': GPU 7 is not present: this node has 4 GPUs (indices 0-3 in PCI bus-id "
            "order)");
}

TEST(SelectGpus, InvalidEntriesAreRejectedWhereCudaWouldStopSilently) {
  // CUDA would stop at the first invalid entry and use "0"; we refuse the value.
  EXPECT_THAT(selection_error(cuda("0,x,1")), HasSubstr("'x' is not a GPU index"));
  EXPECT_THAT(selection_error(cuda("-1")), HasSubstr("'-1' is not a GPU index"));
  EXPECT_THAT(selection_error(cuda("0,,1")), HasSubstr("empty entry"));
}

TEST(SelectGpus, EmptyButSetCudaVisibleDevicesHidesEveryGpu) {
  EXPECT_EQ(selection_error(cuda("")), "CUDA_VISIBLE_DEVICES='': no GPU is visible (the variable is set but empty)");
}

TEST(SelectGpus, DuplicatesAreRejected) {
  EXPECT_THAT(selection_error(cuda("1,1")), HasSubstr("GPU 1 is listed twice"));
  GpuEnvironment env;
  env.slurm_job_gpus = "0-2,1";
  EXPECT_THAT(selection_error(env), HasSubstr("SLURM_JOB_GPUS='0-2,1': GPU 1 is listed twice"));
}

TEST(SelectGpus, SlurmListsAndRanges) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0,2";
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(0, 2));
  env.slurm_step_gpus = "0-3";
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(0, 1, 2, 3));
  env.slurm_step_gpus = "0-1,3";
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(0, 1, 3));
  env.slurm_step_gpus.clear();
  env.slurm_job_gpus = "3";
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(3));
}

TEST(SelectGpus, SlurmStepGpusWinOverJobGpusAndCudaVisibleDevices) {
  GpuEnvironment env = cuda("0");
  env.slurm_job_gpus = "1";
  env.slurm_step_gpus = "2";
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(2));
  env.slurm_step_gpus.clear();
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(1));
  env.slurm_job_gpus.clear();
  EXPECT_THAT(select_gpus(four_gpus(), env), ElementsAre(0));
}

TEST(SelectGpus, BadSlurmValuesNameTheVariable) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0-9";
  EXPECT_THAT(selection_error(env), HasSubstr("SLURM_STEP_GPUS='0-9': GPU 4 is not present: this node has 4 GPUs"));
  env.slurm_step_gpus = "3-1";
  EXPECT_THAT(selection_error(env), HasSubstr("range '3-1' runs backwards"));
  env.slurm_step_gpus = "gpu0";
  EXPECT_THAT(selection_error(env), HasSubstr("SLURM_STEP_GPUS='gpu0': 'gpu0' is not a GPU index"));
}

TEST(SelectGpus, ANodeWithoutGpusNamesThatInTheError) {
  GpuEnvironment env;
  env.slurm_step_gpus = "0";
  try {
    select_gpus(NodeTopology{}, env);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("this node has no NVIDIA GPU"));
  }
  EXPECT_TRUE(select_gpus(NodeTopology{}, GpuEnvironment{}).empty());
}

TEST(CheckGpuIndices, ExplicitIndicesAreCheckedLikeTheEnvironment) {
  EXPECT_THAT(check_gpu_indices(four_gpus(), {3, 1}), ElementsAre(3, 1));
  EXPECT_THROW(check_gpu_indices(four_gpus(), {4}), UsageError);
  EXPECT_THROW(check_gpu_indices(four_gpus(), {0, 0}), UsageError);
  EXPECT_THROW(check_gpu_indices(four_gpus(), {-1}), UsageError);
}

TEST(RestrictGpus, KeepsTheChosenGpusTheirLinksAndEverySwitchAndNic) {
  const NodeTopology node = restrict_gpus(four_gpus(), {3, 1});
  ASSERT_EQ(node.gpu_count(), 2);
  EXPECT_EQ(node.gpus[0].pci_bus_id, "0000:03:00.0");
  EXPECT_EQ(node.gpus[1].pci_bus_id, "0000:01:00.0");
  EXPECT_DOUBLE_EQ(node.link(0, 1).gbytes, 31.0);
  EXPECT_DOUBLE_EQ(node.link(1, 0).gbytes, 13.0);
  EXPECT_EQ(node.link(0, 0).kind, PathKind::kSelf);
  EXPECT_EQ(node.nvswitches.size(), 1u);
  EXPECT_EQ(node.nics.size(), 1u);
  EXPECT_THAT(node.notes, ElementsAre("a note"));
  EXPECT_EQ(node.origin, "test");
}

TEST(GpuEnvironment, FromProcessTellsEmptyFromUnset) {
  unsetenv("SLURM_STEP_GPUS");
  unsetenv("SLURM_JOB_GPUS");
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_FALSE(GpuEnvironment::from_process().cuda_visible_devices_set);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  setenv("SLURM_JOB_GPUS", "0-1", 1);
  const GpuEnvironment env = GpuEnvironment::from_process();
  EXPECT_TRUE(env.cuda_visible_devices_set);
  EXPECT_EQ(env.cuda_visible_devices, "");
  EXPECT_EQ(env.slurm_job_gpus, "0-1");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("SLURM_JOB_GPUS");
}

TEST(Names, SourcesAndPathKindsHaveReadableNames) {
  EXPECT_STREQ(source_name(Source::kHwlocMatrix), "hwloc matrix");
  EXPECT_STREQ(source_name(Source::kNvml), "NVML");
  EXPECT_STREQ(source_name(Source::kPcieRule), "PCIe rule");
  EXPECT_STREQ(path_kind_name(PathKind::kNvswitch), "NVSwitch");
  EXPECT_STREQ(path_kind_name(PathKind::kCrossSocket), "across sockets");
}

}  // namespace
}  // namespace layerplan
