#include "machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace csiop::bench {
namespace {

// The value after "key<spaces>:" of the first line starting with key.
std::string field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) {
        continue;
      }
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return {};
}

} // namespace

Machine describeMachine() {
  Machine m;
  m.cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpuModel = field("/proc/cpuinfo", "model name");
  if (m.cpuModel.empty()) {
    m.cpuModel = "unknown";
  }
  std::istringstream mem(field("/proc/meminfo", "MemTotal"));
  mem >> m.memTotalKb;
  utsname u{};
  if (::uname(&u) == 0) {
    m.kernel = u.release;
  }
  return m;
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

MachineCpu readMachineCpu() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label; // "cpu": the sum over all cores
  MachineCpu m;
  long long value = 0;
  for (int i = 0; i < 10 && in >> value; ++i) {
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // counted in user and nice.
    if (i >= 8) {
      continue;
    }
    m.total += value;
    if (i != 3 && i != 4) {
      m.busy += value;
    }
  }
  return m;
}

double busyPercent(const MachineCpu& from, const MachineCpu& to) {
  const long long total = to.total - from.total;
  return total > 0 ? 100.0 * static_cast<double>(to.busy - from.busy) / static_cast<double>(total)
                   : 0.0;
}

} // namespace csiop::bench
