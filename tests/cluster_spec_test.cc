// Cluster descriptions: the [cluster] table of a TOML file (every key, defaults from a
// base spec, errors that point at file:line:column), the device graph built from a spec
// (catalog NVLink figure, Gb/s to bytes/s for the network) and the GPU catalog look-up.
#include "topology/cluster_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "topology/device_graph.h"
#include "topology/gpu_catalog.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

std::string data_file(const std::string& name) { return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/" + name; }

// The message of the UsageError that load_cluster_file throws for `name`; fails the test
// (and returns "") if it throws nothing or something else.
std::string load_error(const std::string& name) {
  try {
    load_cluster_file(data_file(name));
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << name << ": threw a non-UsageError: " << e.what();
    return "";
  }
  ADD_FAILURE() << name << ": loaded without an error";
  return "";
}

TEST(ClusterSpec, PaperClusterIsFourNodesOfFourP100OnEdrInfiniband) {
  const ClusterSpec spec = ClusterSpec::paper_cluster();
  EXPECT_EQ(spec.nodes, 4);
  EXPECT_EQ(spec.gpus_per_node, 4);
  EXPECT_EQ(spec.gpu, "p100");
  EXPECT_EQ(spec.precision, Precision::kFp32);
  EXPECT_FALSE(spec.intra_bandwidth_gbytes.has_value());
  EXPECT_DOUBLE_EQ(spec.inter_bandwidth_gbits, 100.0);
  EXPECT_EQ(spec.nics_per_node, 1);
  EXPECT_NO_THROW(validate(spec));
}

TEST(ClusterFile, ReadsEveryKeyOfAFullClusterTable) {
  const ClusterSpec spec = load_cluster_file(data_file("full_cluster.toml"));
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.gpus_per_node, 8);
  EXPECT_EQ(spec.gpu, "a100");
  EXPECT_EQ(spec.precision, Precision::kBf16);
  EXPECT_EQ(spec.layout, TensorLayout::kChannelsFirst);
  ASSERT_TRUE(spec.intra_bandwidth_gbytes.has_value());
  EXPECT_DOUBLE_EQ(*spec.intra_bandwidth_gbytes, 250.5);
  EXPECT_DOUBLE_EQ(spec.intra_latency_us, 3.0);  // an integer is accepted for a number
  EXPECT_DOUBLE_EQ(spec.inter_latency_us, 7.5);
  EXPECT_DOUBLE_EQ(spec.inter_bandwidth_gbits, 200.0);
  EXPECT_EQ(spec.nics_per_node, 4);
  EXPECT_DOUBLE_EQ(spec.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(spec.kernel_overhead_us, 8.0);
}

TEST(ClusterFile, KeysTheFileDoesNotNameKeepTheBaseValues) {
  ClusterSpec base;
  base.gpus_per_node = 2;
  base.inter_bandwidth_gbits = 400.0;
  base.kernel_overhead_us = 1.0;
  const ClusterSpec spec = load_cluster_file(data_file("partial_cluster.toml"), base);
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.gpu, "V100");  // kept as written; the catalog look-up ignores case
  EXPECT_EQ(spec.gpus_per_node, 2);
  EXPECT_DOUBLE_EQ(spec.inter_bandwidth_gbits, 400.0);
  EXPECT_DOUBLE_EQ(spec.kernel_overhead_us, 1.0);
  EXPECT_FALSE(spec.intra_bandwidth_gbytes.has_value());
  EXPECT_EQ(build_device_graph(spec).device().model, "Tesla V100-SXM2-32GB");
}

TEST(ClusterFile, UnknownKeyNamesFileLineColumnAndTheKey) {
  const std::string path = data_file("unknown_key.toml");
  const std::string message = load_error("unknown_key.toml");
  EXPECT_THAT(message, StartsWith(path + ":3:"));
  EXPECT_THAT(message.substr(path.size()), MatchesRegex(":3:[0-9]+: .*"));
  EXPECT_THAT(message, HasSubstr("gpus_per_nod"));
}

TEST(ClusterFile, UnknownTopLevelTableIsAnError) {
  const std::string path = data_file("unknown_table.toml");
  const std::string message = load_error("unknown_table.toml");
  EXPECT_THAT(message, StartsWith(path + ":"));
  EXPECT_THAT(message, HasSubstr("network"));
}

TEST(ClusterFile, WrongTypeNamesFileLineColumnKeyAndExpectedType) {
  const std::string path = data_file("wrong_type.toml");
  const std::string message = load_error("wrong_type.toml");
  EXPECT_THAT(message, StartsWith(path + ":3:"));
  EXPECT_THAT(message.substr(path.size()), MatchesRegex(":3:[0-9]+: .*"));
  EXPECT_THAT(message, HasSubstr("gpus_per_node"));
  EXPECT_THAT(message, HasSubstr("integer"));

  const std::string number = load_error("wrong_type_number.toml");
  EXPECT_THAT(number, StartsWith(data_file("wrong_type_number.toml") + ":2:"));
  EXPECT_THAT(number, HasSubstr("inter_node_bandwidth_gbits"));
  EXPECT_THAT(number, HasSubstr("number"));
}

TEST(ClusterFile, ParseErrorNamesFileLineAndColumn) {
  const std::string path = data_file("syntax_error.toml");
  const std::string message = load_error("syntax_error.toml");
  EXPECT_THAT(message, StartsWith(path + ":3:"));
  EXPECT_THAT(message.substr(path.size()), MatchesRegex(":3:[0-9]+: .+"));
}

TEST(ClusterFile, NegativeBandwidthIsRejectedNamingTheFileAndValue) {
  const std::string path = data_file("negative_bandwidth.toml");
  const std::string message = load_error("negative_bandwidth.toml");
  EXPECT_THAT(message, StartsWith(path));
  EXPECT_THAT(message, HasSubstr("bandwidth"));
  EXPECT_THAT(message, HasSubstr("-100"));
}

// cluster_spec.h: "Unknown keys, wrong types and bad values are errors that name the
// file, line and column". A bad value must point at its line like a wrong type does.
TEST(ClusterFile, NegativeBandwidthNamesTheLineAndColumnOfTheValue) {
  const std::string path = data_file("negative_bandwidth.toml");
  const std::string message = load_error("negative_bandwidth.toml");
  EXPECT_THAT(message, StartsWith(path + ":3:"));
  EXPECT_THAT(message.substr(path.size()), MatchesRegex(":3:[0-9]+: .*"));
}

TEST(ClusterFile, MissingFileIsAUsageErrorNamingThePath) {
  const std::string path = data_file("does_not_exist.toml");
  try {
    load_cluster_file(path);
    FAIL() << "loaded a missing file";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

TEST(ClusterFile, FileWithoutClusterTableIsAnError) {
  EXPECT_THAT(load_error("no_cluster_table.toml"), HasSubstr("[cluster]"));
}

TEST(ClusterSpecValidate, OutOfRangeValuesAreUsageErrors) {
  auto rejects = [](auto&& change) {
    ClusterSpec spec;
    change(spec);
    EXPECT_THROW(validate(spec), UsageError);
    EXPECT_THROW(build_device_graph(spec), UsageError);
  };
  rejects([](ClusterSpec& s) { s.nodes = 0; });
  rejects([](ClusterSpec& s) { s.gpus_per_node = 0; });
  rejects([](ClusterSpec& s) { s.gpu = "k80"; });
  rejects([](ClusterSpec& s) { s.intra_bandwidth_gbytes = 0.0; });
  rejects([](ClusterSpec& s) { s.inter_bandwidth_gbits = -1.0; });
  rejects([](ClusterSpec& s) { s.intra_latency_us = -1.0; });
  rejects([](ClusterSpec& s) { s.nics_per_node = 0; });
  rejects([](ClusterSpec& s) { s.compute_efficiency = 1.5; });
  rejects([](ClusterSpec& s) { s.compute_efficiency = 0.0; });
  rejects([](ClusterSpec& s) { s.kernel_overhead_us = -5.0; });
}

TEST(DeviceGraphFromSpec, IntraNodeLinkDefaultsToTheCatalogNvlinkFigure) {
  const ClusterSpec spec = ClusterSpec::paper_cluster();
  const DeviceGraph g = build_device_graph(spec);
  EXPECT_EQ(g.nodes(), 4);
  EXPECT_EQ(g.gpus_per_node(), 4);
  EXPECT_EQ(g.device_count(), 16);
  const double nvlink = find_gpu_model("p100").nvlink_pair_bandwidth;
  EXPECT_DOUBLE_EQ(nvlink, 20e9);
  EXPECT_DOUBLE_EQ(g.intra_link(0, 1).bandwidth, nvlink);
  EXPECT_DOUBLE_EQ(g.intra_link(13, 15).bandwidth, nvlink);
  EXPECT_DOUBLE_EQ(g.intra_link(0, 1).latency, 5e-6);
  EXPECT_DOUBLE_EQ(g.link(4, 5).bandwidth, nvlink);
  // 100 Gb/s, one NIC: 12.5 GB/s between nodes, of which RDMA reaches 90 %.
  EXPECT_DOUBLE_EQ(g.network().bandwidth, 12.5e9 * kRdmaBusShare);
  EXPECT_DOUBLE_EQ(g.link(3, 4).bandwidth, 12.5e9 * kRdmaBusShare);
  EXPECT_DOUBLE_EQ(g.network().latency, 5e-6);
  EXPECT_EQ(g.device().model, "Tesla P100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(g.device().peak_flops, 10.6e12);
  EXPECT_DOUBLE_EQ(g.device().compute_efficiency, 0.85);
  EXPECT_DOUBLE_EQ(g.device().kernel_overhead_s, 5e-6);
}

TEST(DeviceGraphFromSpec, ExplicitFiguresAndNicsPerNodeAreUsed) {
  const DeviceGraph g = build_device_graph(load_cluster_file(data_file("full_cluster.toml")));
  EXPECT_EQ(g.device_count(), 16);
  EXPECT_EQ(g.gpus_per_node(), 8);
  EXPECT_DOUBLE_EQ(g.intra_link(0, 7).bandwidth, 250.5e9);
  EXPECT_DOUBLE_EQ(g.intra_link(0, 7).latency, 3e-6);
  // 200 Gb/s per NIC = 25 GB/s, times 4 NICs, of which RDMA reaches 90 %.
  EXPECT_DOUBLE_EQ(g.network().bandwidth, 100e9 * kRdmaBusShare);
  EXPECT_DOUBLE_EQ(g.network().latency, 7.5e-6);
  EXPECT_DOUBLE_EQ(g.device().peak_flops, find_gpu_model("a100").bf16_flops);
  EXPECT_DOUBLE_EQ(g.device().compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(g.device().kernel_overhead_s, 8e-6);
}

// Mixed precision before Ampere runs on the FP16 units (tensor cores from Volta on), with
// 2-byte tensors; bf16, which those GPUs lack, is refused naming the GPU.
TEST(DeviceGraphFromSpec, Fp16UsesTheFp16RateAndBf16IsRefusedWhereTheGpuHasNone) {
  ClusterSpec spec;
  spec.precision = Precision::kFp16;
  for (const auto& [gpu, tflops] :
       std::vector<std::pair<std::string, double>>{{"p100", 21.2}, {"v100", 125}, {"t4", 65}, {"a100", 312}}) {
    spec.gpu = gpu;
    const DeviceGraph g = build_device_graph(spec);
    EXPECT_DOUBLE_EQ(g.device().peak_flops, tflops * 1e12) << gpu;
    EXPECT_EQ(g.device().bytes_per_element, 2) << gpu;
  }
  spec.precision = Precision::kBf16;
  for (const std::string gpu : {"p100", "p100-pcie", "v100", "t4"}) {
    spec.gpu = gpu;
    try {
      build_device_graph(spec);
      FAIL() << gpu << " priced bf16";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(find_gpu_model(gpu).full_name));
      EXPECT_THAT(e.what(), HasSubstr("no bf16 support"));
      EXPECT_THAT(e.what(), HasSubstr("fp16"));
    }
  }
  EXPECT_EQ(cluster_from_toml("[cluster]\nprecision = \"fp16\"\n", "fp16.toml").precision, Precision::kFp16);
}

TEST(DeviceGraphFromSpec, TheNetworkIsTheLineRateTimesTheFabricsShare) {
  ClusterSpec spec = cluster_from_toml("[cluster]\nfabric = \"tcp\"\n", "tcp.toml");
  EXPECT_EQ(spec.fabric, Fabric::kTcp);
  EXPECT_DOUBLE_EQ(build_device_graph(spec).network().bandwidth, 12.5e9 * kTcpBusShare);
  EXPECT_THROW(cluster_from_toml("[cluster]\nfabric = \"carrier pigeon\"\n", "x.toml"), UsageError);
}

// GPUs price GEMMs by their shape, on tensor cores where the precision has them; a cluster
// file can turn the shape model off for devices that are not a GPU's kernels.
TEST(DeviceGraphFromSpec, KernelShapesAndTensorCoresFollowTheGpuAndPrecision) {
  ClusterSpec spec;
  spec.gpu = "v100";
  const Device fp32 = build_device_graph(spec).device();
  EXPECT_TRUE(fp32.kernel_shape_model);
  EXPECT_FALSE(fp32.tensor_cores);
  EXPECT_DOUBLE_EQ(fp32.memory_efficiency, kDefaultGpuMemoryEfficiency);
  spec.precision = Precision::kFp16;
  EXPECT_TRUE(build_device_graph(spec).device().tensor_cores);
  spec.gpu = "p100";  // FP16 on CUDA cores, at twice the FP32 rate
  EXPECT_FALSE(build_device_graph(spec).device().tensor_cores);
  ClusterSpec bare = cluster_from_toml("[cluster]\nkernel_shapes = false\n", "bare.toml");
  const Device d = build_device_graph(bare).device();
  EXPECT_FALSE(d.kernel_shape_model);
  EXPECT_DOUBLE_EQ(d.memory_efficiency, 1.0);
  EXPECT_THROW(cluster_from_toml("[cluster]\nkernel_shapes = 1\n", "x.toml"), UsageError);
}

TEST(DeviceGraphFromSpec, TheLayoutComesFromTheFileAndAnUnknownOneIsNamed) {
  EXPECT_EQ(build_device_graph(ClusterSpec{}).device().layout, TensorLayout::kChannelsLast);
  const ClusterSpec nchw = cluster_from_toml("[cluster]\nlayout = \"NCHW\"\n", "nchw.toml");
  EXPECT_EQ(build_device_graph(nchw).device().layout, TensorLayout::kChannelsFirst);
  try {
    cluster_from_toml("[cluster]\nlayout = \"chw\"\n", "bad.toml");
    ADD_FAILURE() << "no error for layout chw";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.toml:2:"));
    EXPECT_THAT(e.what(), HasSubstr("'chw'"));
    EXPECT_THAT(e.what(), HasSubstr("expected nhwc"));
  }
}

TEST(DeviceGraphFromSpec, PrecisionWithoutTensorCoresFallsBackToFp32) {
  ClusterSpec spec;
  spec.precision = Precision::kTf32;  // the P100 has no TF32
  EXPECT_DOUBLE_EQ(build_device_graph(spec).device().peak_flops, 10.6e12);
}

TEST(GpuCatalog, ListsP100ThroughH200) {
  std::vector<std::string> names;
  for (const GpuModel& m : gpu_catalog()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"p100", "p100-pcie", "v100", "t4", "a100", "h100", "h200"}));
}

TEST(GpuCatalog, LookUpIgnoresCase) {
  EXPECT_EQ(find_gpu_model("P100").name, "p100");
  EXPECT_EQ(find_gpu_model("h100").name, "h100");
  EXPECT_EQ(find_gpu_model("A100").full_name, "A100-SXM4-80GB");
  EXPECT_EQ(&find_gpu_model("V100"), &find_gpu_model("v100"));
}

TEST(GpuCatalog, UnknownGpuListsTheKnownOnes) {
  try {
    find_gpu_model("k80");
    FAIL() << "found a k80";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("k80"));
    for (const GpuModel& m : gpu_catalog()) EXPECT_THAT(message, HasSubstr(m.name));
  }
}

TEST(GpuCatalog, PrecisionNamesRoundTrip) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    EXPECT_EQ(parse_precision(precision_name(p)), p);
  }
  EXPECT_EQ(parse_precision("FP16"), Precision::kFp16);
  EXPECT_EQ(parse_precision("BF16"), Precision::kBf16);
  EXPECT_THROW(parse_precision("fp64"), UsageError);
}

}  // namespace
}  // namespace layerplan
