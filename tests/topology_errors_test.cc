// Bad topology input gives one UsageError line that names the file and says what was
// expected: a missing file, something that is not hwloc XML, a truncated file, XML that
// hwloc cannot import, and an hwloc 3 export.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "topology/discovery.h"

namespace layerplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string fixture(const std::string& name) {
  return std::string(LAYERPLAN_SOURCE_DIR) + "/tests/data/topologies/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A per-process temporary file holding `text`, removed at the end of the test.
class TempXml {
 public:
  explicit TempXml(const std::string& text)
      : path_(testing::TempDir() + "layerplan_topology_" + std::to_string(getpid()) + "_" +
              testing::UnitTest::GetInstance()->current_test_info()->name() + ".xml") {
    std::ofstream(path_) << text;
  }
  ~TempXml() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The message of the UsageError discover_node throws for `path`, or a failure.
std::string discovery_error(const std::string& path) {
  DiscoveryOptions options;
  options.topology_xml = path;
  try {
    discover_node(options);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UsageError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

TEST(TopologyErrors, MissingFileIsNamed) {
  const std::string message = discovery_error("/nonexistent/node.xml");
  EXPECT_EQ(message, "hwloc XML file '/nonexistent/node.xml' cannot be read: No such file or directory");
}

TEST(TopologyErrors, FileWithoutTopologyElementIsNotHwlocXml) {
  const TempXml file("this is not XML at all\n");
  const std::string message = discovery_error(file.path());
  EXPECT_THAT(message, HasSubstr("'" + file.path() + "' is not an hwloc XML export: no <topology> element"));
}

TEST(TopologyErrors, TruncatedExportIsMalformed) {
  const std::string text = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  const TempXml file(text.substr(0, 5000));
  const std::string message = discovery_error(file.path());
  EXPECT_THAT(message, HasSubstr("'" + file.path() + "' is malformed hwloc XML"));
  EXPECT_THAT(message, HasSubstr("does not end with </topology>"));
}

TEST(TopologyErrors, XmlThatHwlocCannotImportIsMalformed) {
  const TempXml file(
      "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\"> <<broken>>\n</topology>\n");
  const std::string message = discovery_error(file.path());
  EXPECT_EQ(message, "'" + file.path() + "' is malformed hwloc XML: hwloc 2.9 could not import it");
}

TEST(TopologyErrors, Hwloc3ExportSaysHowToReexportIt) {
  std::string text = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  const std::string v2 = "<topology version=\"2.0\">";
  ASSERT_NE(text.find(v2), std::string::npos);
  text.replace(text.find(v2), v2.size(), "<topology version=\"3.0\">");
  const TempXml file(text);
  const std::string message = discovery_error(file.path());
  EXPECT_THAT(message, HasSubstr("'" + file.path() + "' is an hwloc 3 export"));
  EXPECT_THAT(message, HasSubstr("hwloc 2.9 cannot import"));
  EXPECT_THAT(message, HasSubstr("lstopo --of v2xml"));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

TEST(TopologyErrors, AnObjectTagThatIsNotWellFormedIsNamedByItsLine) {
  const TempXml file(
      "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" <<broken>>\n</topology>\n");
  EXPECT_EQ(discovery_error(file.path()), "'" + file.path() +
                                              "' is malformed hwloc XML: the <object> tag on line 3 is not "
                                              "well-formed (expected name=\"value\" attributes and a closing '>')");
}

// The version is read digit by digit; a huge one is still an hwloc 3 (or later) export, not an
// int that wraps to 0 and lets the file through.
TEST(TopologyErrors, AHugeMajorVersionIsRefusedAsTooNewWithoutOverflowing) {
  std::string text = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  const std::string v2 = "<topology version=\"2.0\">";
  ASSERT_NE(text.find(v2), std::string::npos);
  text.replace(text.find(v2), v2.size(), "<topology\n  version = '4294967296.0'>");
  const TempXml file(text);
  EXPECT_THAT(discovery_error(file.path()), HasSubstr("is an hwloc 3 export (<topology version=\"4294967296.0\">)"));
}

TEST(TopologyErrors, EnvironmentVariableNamesTheExportWhenNoFileIsGiven) {
  setenv("LAYERPLAN_TOPOLOGY_XML", fixture("mpibind-pascal-2xp100-pcie-ib.xml").c_str(), 1);
  const NodeTopology node = discover_node(DiscoveryOptions{});
  unsetenv("LAYERPLAN_TOPOLOGY_XML");
  EXPECT_EQ(node.gpu_count(), 2);
  EXPECT_THAT(node.origin, HasSubstr("mpibind-pascal-2xp100-pcie-ib.xml"));
}

TEST(TopologyErrors, BadGpuSelectionOnAFixtureIsAUsageError) {
  DiscoveryOptions options;
  options.topology_xml = fixture("mpibind-pascal-2xp100-pcie-ib.xml");
  options.env.cuda_visible_devices = "2";
  try {
    discover_node(options);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUDA_VISIBLE_DEVICES='2': GPU 2 is not present: this node has 2 GPUs"));
  }
}

}  // namespace
}  // namespace layerplan

namespace layerplan {
namespace {

// libhwloc 2.9 crashes (SIGSEGV, a null bitmap in hwloc_bitmap_compare_first) loading an
// object with a cpuset but no complete_cpuset; the fuzzer found such an export
// (tests/fuzz/corpus/fuzz_hwloc_xml/finding-missing-complete-cpuset.xml). It is refused first.
TEST(TopologyErrors, AnObjectWithoutItsCompleteSetIsRefusedBeforeHwlocCrashesOnIt) {
  const std::string found =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-missing-complete-cpuset.xml";
  EXPECT_THAT(discovery_error(found), HasSubstr("has a cpuset but no complete_cpuset"));
  for (const std::string set : {"cpuset", "nodeset"}) {
    std::string text = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
    const size_t at = text.find(" complete_" + set + "=");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 11 + set.size(), " completely_" + set + "=");  // the "=" included
    const TempXml file(text);
    const std::string message = discovery_error(file.path());
    EXPECT_THAT(message, HasSubstr("'" + file.path() + "' is malformed hwloc XML: the object with gp_index "));
    EXPECT_THAT(message, HasSubstr("has a " + set + " but no complete_" + set));
  }
}

// XML allows any whitespace between attributes and around '=', and either quote: the check
// reads attributes as hwloc does, so such spacing does not hide the object from it.
TEST(TopologyErrors, AnObjectWithoutItsCompleteSetIsRefusedWhateverTheSpacingOfItsAttributes) {
  const std::string found =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-missing-complete-cpuset.xml";
  const std::string original = " cpuset=\"0x00000001\" complete_cpuwet=";
  for (const std::string spaced :
       {"\n\tcpuset=\"0x00000001\" complete_cpuwet=", " cpuset = '0x00000001'\r\ncomplete_cpuwet="}) {
    std::string text = read(found);
    ASSERT_NE(text.find(original), std::string::npos);
    text.replace(text.find(original), original.size(), spaced);
    const TempXml file(text);
    EXPECT_THAT(discovery_error(file.path()),
                HasSubstr("the object with gp_index 7 has a cpuset but no complete_cpuset"));
  }
}

// hwloc's libxml2 backend expands entities: the crashing object of the finding above, moved
// into an entity the export declares, crashed it again (SIGSEGV) past the check. lstopo
// writes no DTD of its own and no entity but the predefined ones, so anything else is refused.
TEST(TopologyErrors, EntitiesAndDeclarationsThatLstopoNeverWritesAreRefused) {
  const std::string hidden =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-object-inside-entity.xml";
  EXPECT_THAT(discovery_error(hidden), HasSubstr("is malformed hwloc XML: line 2 declares <!ENTITY, which lstopo never "
                                                 "writes (expected an export without a DTD of its own)"));
  const std::string doctype = "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">";
  const std::string original = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  ASSERT_NE(original.find(doctype), std::string::npos);
  std::string text = original;
  text.replace(text.find(doctype), doctype.size(), "<!DOCTYPE topology [ <!ATTLIST object cpuset CDATA '0x1'> ]>");
  const TempXml declared(text);
  EXPECT_THAT(discovery_error(declared.path()), HasSubstr("declares <!ATTLIST"));
  text = original;
  text.replace(text.find("<object"), 0, "&hidden;");
  const TempXml referred(text);
  EXPECT_THAT(
      discovery_error(referred.path()),
      HasSubstr("refers to an entity (expected only &amp; &lt; &gt; &quot; &apos; and &#...; as lstopo writes)"));
  text = original;
  const std::string machine = "<object type=\"Machine\"";
  ASSERT_NE(text.find(machine), std::string::npos);
  text.replace(text.find(machine), machine.size(), machine + " subtype=\"&lt;&#60;&#x3c;&amp;&quot;&apos;&gt;\"");
  const TempXml predefined(text);
  EXPECT_EQ(discover_node([&] {
              DiscoveryOptions options;
              options.topology_xml = predefined.path();
              return options;
            }())
                .gpu_count(),
            2);
}

// hwloc 2.9 sets bit os_index of a bitmap for every PU and NUMA node: the fuzzer found that a
// PU without os_index (2^32 - 1 to hwloc) makes it allocate 512 MiB; so does a huge one.
TEST(TopologyErrors, APuOrNumaNodeWithoutASmallOsIndexIsRefusedBeforeHwlocAllocatesForIt) {
  const std::string found =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-pu-without-os-index.xml";
  EXPECT_THAT(discovery_error(found), HasSubstr("the PU with gp_index 4 has os_index ''"));
  const std::string original = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  for (const std::string type : {"PU", "NUMANode"}) {
    const std::string tag = "<object type=\"" + type + "\" os_index=\"0\"";
    ASSERT_NE(original.find(tag), std::string::npos) << type;
    for (const std::string& replacement : {std::string("ms_index=\"0\""), std::string("os_index=\"4000000000\""),
                                           std::string("os_index=\"1048576\""), std::string("os_index=\"-1\"")}) {
      std::string text = original;
      text.replace(text.find(tag), tag.size(), "<object type=\"" + type + "\" " + replacement);
      const TempXml file(text);
      const std::string message = discovery_error(file.path());
      EXPECT_THAT(message, HasSubstr("is malformed hwloc XML: the " + type + " with gp_index ")) << replacement;
      EXPECT_THAT(message, HasSubstr("(expected 0 to 1048575, as lstopo writes for every " + type + ")"));
    }
    std::string text = original;
    text.replace(text.find(tag), tag.size(), "<object type=\"Core\" type=\"" + type + "\" ms_index=\"0\"");
    const TempXml twice(text);
    EXPECT_THAT(discovery_error(twice.path()), HasSubstr(" has type twice"));
    text = original;
    text.replace(text.find(tag), tag.size(), "<object type=\"" + type + "\" os_index=\"1048575\"");
    const TempXml largest(text);
    DiscoveryOptions options;
    options.topology_xml = largest.path();
    EXPECT_NO_THROW(discover_node(options)) << type;
  }
}

// hwloc 2.9 aborts (an assertion in hwloc_bitmap_sscanf) on a cpuset that starts with a comma;
// the fuzzer found ",x01000000". Every *cpuset and *nodeset attribute, in objects and in other
// elements such as cpukinds, must be a bitmap as lstopo writes it.
TEST(TopologyErrors, BitmapsThatLstopoWouldNotWriteAreRefusedBeforeHwlocAbortsOnThem) {
  const std::string found =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-cpuset-leading-comma.xml";
  EXPECT_THAT(discovery_error(found), HasSubstr("is malformed hwloc XML: line 203 has cpuset ',x01000000' (expected an "
                                                "hwloc bitmap, such as 0x000000ff,0xffffffff, as lstopo writes)"));
  const std::string original = read(fixture("flux-dell-xe8640-4xh100-nvlink-4xndr.xml"));
  for (const std::string element : {"<object type=\"Machine\"", "<cpukind"}) {
    const size_t tag = original.find(element);
    ASSERT_NE(tag, std::string::npos) << element;
    const size_t value = original.find("cpuset=\"", tag) + 8;
    const size_t end = original.find('"', value);
    for (const std::string bad : {",0x1", ",x1", "", "0x1,", "0x123456789", "0x1,0xf...f", "0xf...f,"}) {
      std::string text = original;
      text.replace(value, end - value, bad);
      const TempXml file(text);
      EXPECT_THAT(discovery_error(file.path()), HasSubstr("has cpuset '" + bad + "' (expected an hwloc bitmap"))
          << element << " " << bad;
    }
  }
}

// hwloc reads "-5000" in an NVLinkBandwidth matrix as 2^64 - 5000 MB/s; the reader turned that
// into a link count beyond int (undefined behaviour, found by fuzz_hwloc_xml). Such values
// are refused.
TEST(TopologyErrors, AnNvlinkBandwidthBeyondAnyLinkIsRefusedNotCounted) {
  const std::string found =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-negative-nvlink-bandwidth.xml";
  EXPECT_THAT(discovery_error(found), HasSubstr(": an NVLinkBandwidth value of 18446744073709546616 MB/s is beyond "
                                                "100 TB/s (expected the MB/s of one link between two devices)"));
  std::string text = read(fixture("hwloc-test-nvidia-dgx2-v100-nvswitch.xml"));
  const std::string row = "<u64values length=\"36\">0 0 0 0 0 0 25000 ";
  ASSERT_NE(text.find(row), std::string::npos);
  // hwloc checks each line's length in bytes: the value keeps its width.
  text.replace(text.find(row), row.size(), "<u64values length=\"36\">0 0 0 0 0 0 -9000 ");
  const TempXml file(text);
  EXPECT_THAT(discovery_error(file.path()),
              HasSubstr("an NVLinkBandwidth value of 18446744073709542616 MB/s is beyond 100 TB/s"));
}

// hwloc keeps any osdev_type an export gives; reading 51 as hwloc's enum was undefined
// behaviour (UBSan, found by fuzz_hwloc_xml). Such a device is simply not a NIC.
TEST(TopologyErrors, AnOsDeviceOfAnUnknownTypeIsNotANic) {
  const std::string original = read(fixture("mpibind-pascal-2xp100-pcie-ib.xml"));
  const std::string openfabrics = "name=\"mlx5_0\" osdev_type=\"3\"";
  ASSERT_NE(original.find(openfabrics), std::string::npos);
  std::string text = original;
  text.replace(text.find(openfabrics), openfabrics.size(), "name=\"mlx5_0\" osdev_type=\"51\"");
  const TempXml after(text);
  DiscoveryOptions options;
  options.topology_xml = after.path();
  for (const NicInfo& nic : discover_node(options).nics) EXPECT_NE(nic.name, "mlx5_0");
  options.topology_xml =
      std::string(LAYERPLAN_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_hwloc_xml/finding-unknown-osdev-type.xml";
  EXPECT_NO_THROW(discover_node(options));
}

}  // namespace
}  // namespace layerplan
