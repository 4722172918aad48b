// The web build's GPU probe: a browser has no NVML, so --gpu local reads nothing and says why.
// Replaces src/probe/nvml_probe.cpp (web/CMakeLists.txt).
#include <cstdlib>

#include <memplan/probe.hpp>

namespace memplan {

ProbeOptions ProbeOptions::from_environment() { return ProbeOptions{}; }

ProbeReport probe_devices(const ProbeOptions& /*options*/) {
  ProbeReport report;
  report.error = "no GPU can be read from a web page (NVML needs the native memplan)";
  return report;
}

}  // namespace memplan
