// How busy the machine was during one phase of a scenario: the control plane, kwok, the
// operator and the benchmark share its cores, so a figure means little without it.
#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>

#include "machine.hpp"
#include "watch_set.hpp"

namespace csiop::bench {

struct PhaseLoad {
  std::string phase;
  double seconds = 0;
  double machineBusyPercent = 0; // all cores, the operator and the control plane included
  double operatorCpuSeconds = 0;
  double benchCpuSeconds = 0; // the benchmark itself (its watches parse every event too)
  std::string loadAverage;    // at the end of the phase
};

// Reads the machine's, the operator's and the benchmark's CPU time at construction and again at
// finish().
class PhaseMeter {
public:
  explicit PhaseMeter(pid_t operatorPid);
  PhaseLoad finish(std::string phase) const;

private:
  pid_t operatorPid_;
  Clock::time_point from_;
  MachineCpu machine_;
  double operatorCpu_;
  double benchCpu_;
};

// "  <phase>  12.3 s  machine 55.0 % busy  operator 1.20 s CPU  benchmark 0.30 s CPU  load ..."
void printPhase(std::ostream& out, const PhaseLoad& phase);

} // namespace csiop::bench
