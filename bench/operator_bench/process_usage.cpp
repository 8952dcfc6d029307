#include "process_usage.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace csiop::bench {

MemoryUsage readMemory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  MemoryUsage m;
  std::string line;
  while (std::getline(in, line)) {
    const auto value = [&](const char* key) {
      return line.rfind(key, 0) == 0 ? std::stol(line.substr(std::strlen(key))) : -1L;
    };
    if (line.rfind("VmRSS:", 0) == 0) {
      m.rssKb = value("VmRSS:");
    } else if (line.rfind("VmHWM:", 0) == 0) {
      m.hwmKb = value("VmHWM:");
    } else if (line.rfind("RssAnon:", 0) == 0) {
      m.anonKb = value("RssAnon:");
    }
  }
  return m;
}

double readCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so count from the last ')'.
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) {
    return -1;
  }
  std::istringstream fields(stat.substr(paren + 1));
  std::string skipped;
  for (int i = 3; i <= 13; ++i) { // state .. cmajflt
    fields >> skipped;
  }
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  if (!(fields >> utime >> stime)) {
    return -1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

CpuMeter::CpuMeter(pid_t pid, std::chrono::milliseconds sampleEvery)
    : pid_(pid), startAt_(std::chrono::steady_clock::now()), startCpu_(readCpuSeconds(pid)) {
  if (sampleEvery.count() > 0) {
    sampler_ = std::thread([this, sampleEvery] { sample(sampleEvery); });
  }
}

CpuMeter::~CpuMeter() {
  stopSampling();
}

void CpuMeter::sample(std::chrono::milliseconds every) {
  auto lastAt = startAt_;
  double last = startCpu_;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, every, [this] { return stopping_; })) {
    const double cpu = readCpuSeconds(pid_);
    const auto now = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(now - lastAt).count();
    if (cpu >= 0 && last >= 0 && wall > 0) {
      peak_ = std::max(peak_.value_or(0.0), (cpu - last) / wall * 1000);
    }
    last = cpu;
    lastAt = now;
  }
}

void CpuMeter::stopSampling() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) {
    sampler_.join();
  }
}

std::optional<CpuUsage> CpuMeter::finish() {
  stopSampling();
  const double cpu = readCpuSeconds(pid_);
  if (cpu < 0 || startCpu_ < 0) {
    return std::nullopt;
  }
  CpuUsage u;
  u.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - startAt_).count();
  u.cpuSeconds = cpu - startCpu_;
  u.peakMillicores = peak_;
  return u;
}

} // namespace csiop::bench
