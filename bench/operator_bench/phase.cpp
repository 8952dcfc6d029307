#include "phase.hpp"

#include <unistd.h>

#include <cstdio>

#include "process_usage.hpp"

namespace csiop::bench {

PhaseMeter::PhaseMeter(pid_t operatorPid)
    : operatorPid_(operatorPid), from_(Clock::now()), machine_(readMachineCpu()),
      operatorCpu_(readCpuSeconds(operatorPid)), benchCpu_(readCpuSeconds(::getpid())) {}

PhaseLoad PhaseMeter::finish(std::string phase) const {
  PhaseLoad p;
  p.phase = std::move(phase);
  p.seconds = std::chrono::duration<double>(Clock::now() - from_).count();
  p.machineBusyPercent = busyPercent(machine_, readMachineCpu());
  p.operatorCpuSeconds = readCpuSeconds(operatorPid_) - operatorCpu_;
  p.benchCpuSeconds = readCpuSeconds(::getpid()) - benchCpu_;
  p.loadAverage = loadAverage();
  return p;
}

void printPhase(std::ostream& out, const PhaseLoad& phase) {
  char line[320];
  std::snprintf(line, sizeof line,
                "  %-40s %7.1f s  machine %5.1f %% busy  operator %7.2f s CPU  benchmark %6.2f s "
                "CPU  load %s\n",
                phase.phase.c_str(), phase.seconds, phase.machineBusyPercent,
                phase.operatorCpuSeconds, phase.benchCpuSeconds, phase.loadAverage.c_str());
  out << line;
}

} // namespace csiop::bench
