// `csi-operator run` under test, and the kubectl-level checks the operator suites share.
//
//   OperatorProcess op("operator.log", {"--leader-elect"});  starts it (metrics and probes on
//                                                            free loopback ports, log in an
//                                                            artifact); SIGKILLed if destroyed
//   op.waitReady(60s)                                        /readyz answers 200
//   op.metric("csiop_leader")                                a sample of its /metrics (-1: none)
//   op.metrics()                                             all of its /metrics
//   op.mutatingRequests()                                    csiop_api_mutating_requests_total
//                                                            (every resource's)
//   op.writesTo("daemonsets")                                ... of one resource
//   op.waitForNoWrites(3s, 30s)                              that counter flat for 3 s
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <csiop/testsupport/operator_command.hpp>
#include <csiop/testsupport/ports.hpp>

#include "harness.hpp"

namespace csiop::e2e {

using testsupport::freeLoopbackPort;

// How to run the operator: its arguments (subcommand first) and its credentials. The
// metrics and health probe addresses are always added (free loopback ports).
struct OperatorInvocation {
  std::vector<std::string> args;
  std::filesystem::path kubeconfig; // empty: the cluster's admin kubeconfig
  std::filesystem::path binary;     // empty: operatorBinary()
};

class OperatorProcess {
public:
  // Runs `csi-operator <subcommand> --kubeconfig <cluster> <extra...>` with -v 2.
  OperatorProcess(const std::string& logName, const std::vector<std::string>& extraArgs = {},
                  const std::string& subcommand = "run");
  OperatorProcess(const std::string& logName, const OperatorInvocation& invocation);

  bool waitReady(std::chrono::milliseconds timeout);
  // Its /metrics text ("" if it does not answer).
  std::string metrics() const;
  // The value of the first sample whose line starts with `series` ("name" or
  // "name{labels}"), or -1 if there is none or /metrics does not answer.
  double metric(const std::string& series) const;
  // The sum of every sample of a family (-1 if /metrics does not answer).
  double metricSum(const std::string& family) const;
  double mutatingRequests() const { return metricSum("csiop_api_mutating_requests_total"); }
  // The CPU time it has used so far, user and system (s), from /proc/<pid>/stat.
  double cpuSeconds() const;
  // Writes to one resource (the plural), 0 before the first.
  double writesTo(const std::string& resource) const;
  // Writes by resource, as the operator counted them so far.
  std::map<std::string, double> writesByResource() const;
  // Waits until the operator has written nothing for `quiet` (what earlier steps set off, a
  // finalizer's deletes or their Events, is done), at most `timeout`: whether it got there.
  bool waitForNoWrites(std::chrono::milliseconds quiet, std::chrono::milliseconds timeout) const;

  // SIGTERM, then waits for the exit: its code (128+N for signal N), nullopt on timeout.
  std::optional<int> stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  ChildProcess& process() { return *process_; }
  std::string log() const { return process_->log(); }

private:
  testsupport::OperatorPorts ports_;
  std::unique_ptr<ChildProcess> process_;
};

// Registers `driver` on every node the way the kubelet would: a CSINode named
// after the node, owned by it, listing the driver.
void registerDriverOnNodes(const std::string& driver);
// status of condition `type` of DriverDeployment `dd` ("" if absent)
std::string ddCondition(const std::string& dd, const std::string& type);
// `field` (reason, message, ...) of condition `type` of DriverDeployment `dd` ("" if absent)
std::string conditionField(const std::string& dd, const std::string& type,
                           const std::string& field);
// The status of DriverDeployment `dd`, as JSON text (for messages)
std::string ddStatus(const std::string& dd);
// `kubectl get <what...>` succeeds
bool exists(const std::vector<std::string>& what);
void deleteDd(const std::string& name);
std::string readFile(const std::filesystem::path& path);
// s without trailing newlines and spaces (kubectl's output, for comparisons).
std::string trimmed(std::string s);
// In `dir`: a CA `ca`.crt/.key (openssl) and, signed by it, tls.crt/tls.key for IP 127.0.0.1,
// the serving pair replaced last. Reports a gtest failure and returns false if openssl fails.
bool issueServingCertificate(const std::filesystem::path& dir, const std::string& ca);
// Registers (kubectl apply) the ValidatingWebhookConfiguration `name`: the webhook served on
// https://127.0.0.1:`port` (CA `caBundle`), for `operations` of DriverDeployments labelled
// `label`: "true" only, so that other suites never meet it; the webhook itself is named
// `webhookName` (the API server's messages and metrics name it). A gtest failure if kubectl fails.
void registerLocalWebhook(const std::string& name, int port, const std::string& caBundle,
                          const std::string& label, const std::vector<std::string>& operations,
                          const std::string& failurePolicy,
                          const std::string& webhookName = "validate.csiop.dev");
// Now, as an Event's lastTimestamp.
std::string nowRfc3339();
// A FailedMount Warning Event `name` on pod `pod` of `ns` for volume `volume`, as the kubelet
// writes it (its words, its source), failing with `why`.
std::string failedMount(const std::string& ns, const std::string& pod, const std::string& name,
                        const std::string& volume, const std::string& why);
// examples/hostpath.yaml as DriverDeployment `name`, driver `name`.csi.k8s.io, namespace
// csi-`name`: the same children under other names.
std::string hostpathAs(const std::string& name);

} // namespace csiop::e2e
