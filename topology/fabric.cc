#include "topology/fabric.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace layerplan {

Fabric parse_fabric(std::string_view text) {
  std::string word(text);
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (word == "rdma") return Fabric::kRdma;
  if (word == "tcp") return Fabric::kTcp;
  throw UsageError("unknown fabric '" + std::string(text) + "': expected rdma (InfiniBand, RoCE) or tcp (sockets)");
}

std::string_view fabric_name(Fabric fabric) { return fabric == Fabric::kTcp ? "tcp" : "rdma"; }

double fabric_bus_share(Fabric fabric) { return fabric == Fabric::kTcp ? kTcpBusShare : kRdmaBusShare; }

}  // namespace layerplan
