#include "topology/fabric.h"

#include "common/error.h"
#include "common/text.h"

namespace layerplan {

Fabric parse_fabric(std::string_view text) {
  const std::string word = ascii_lower(text);
  if (word == "rdma") return Fabric::kRdma;
  if (word == "tcp") return Fabric::kTcp;
  throw UsageError("unknown fabric '" + std::string(text) + "': expected rdma (InfiniBand, RoCE) or tcp (sockets)");
}

std::string_view fabric_name(Fabric fabric) { return fabric == Fabric::kTcp ? "tcp" : "rdma"; }

double fabric_bus_share(Fabric fabric) { return fabric == Fabric::kTcp ? kTcpBusShare : kRdmaBusShare; }

}  // namespace layerplan
