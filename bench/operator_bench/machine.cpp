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

} // namespace csiop::bench
