// The operator's half of the watch path benchmark (bench/watch-path runs it; see there): the CPU
// of a watch event from the socket to the store's handlers (TLS, HTTP framing, parse with the pod
// cache's field mask, transform, CachedPod, indexes, handlers), measured as client-go's informer
// is by clientgo-watch, on the same recorded stream that replay-server serves.
//
//   watch_path_bench --write-stream stream.jsonl [--events 20000 --pods 50]
//       writes the recorded stream (recorded_stream.hpp)
//   watch_path_bench --kubeconfig DIR/kubeconfig [--events 20000 --timeout 600]
//       runs the operator's pod cache (operator_pod_cache.hpp) against the server of that
//       kubeconfig until it has heard --events watch events, then prints the line of
//       event_meter.hpp; exits 1 with what it heard if --timeout seconds pass first.
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/kube/config.hpp>

#include "event_meter.hpp"
#include "operator_pod_cache.hpp"
#include "recorded_stream.hpp"

namespace {

namespace asio = boost::asio;
using namespace csiop;

int writeStream(const std::string& path, const bench::StreamShape& shape) {
  std::ofstream out(path, std::ios::binary);
  bench::writeRecordedStream(out, shape);
  out.close();
  if (!out) {
    std::cerr << "cannot write " << path << "\n";
    return 1;
  }
  return 0;
}

int watchPods(const std::string& kubeconfig, std::size_t events, std::chrono::seconds timeout) {
  asio::io_context io;
  kube::Client client(io.get_executor(), kube::loadKubeconfig(kubeconfig));
  bench::EventMeter meter(events);
  asio::steady_timer deadline(io, timeout);
  bench::OperatorPodCache cache(client, [&] {
    const bool last = meter.heard();
    if (last) {
      deadline.cancel();
    }
    return last;
  });
  std::exception_ptr failure;
  asio::co_spawn(io, cache.run(), [&](std::exception_ptr e) {
    failure = e;
    deadline.cancel();
  });
  bool timedOut = false;
  deadline.async_wait([&](boost::system::error_code ec) {
    if (!ec) {
      timedOut = true;
      cache.stop();
    }
  });
  io.run();
  if (failure) {
    std::rethrow_exception(failure);
  }
  if (timedOut || !meter.done()) {
    std::cerr << "timed out after " << timeout.count() << " s: heard " << meter.events() << " of "
              << events << " events (" << cache.handlerCalls() << " handler calls, "
              << cache.cachedPods() << " pods cached)\n";
    return 1;
  }
  std::cout << meter.line(cache.handlerCalls()) << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"watch_path_bench: the operator's pod cache on a recorded watch stream"};
  std::string kubeconfig;
  std::string streamPath;
  bench::StreamShape shape;
  int timeoutSeconds = 600;
  app.add_option("--kubeconfig", kubeconfig, "the replay server's kubeconfig: watch its pods");
  app.add_option("--write-stream", streamPath, "write the recorded stream to this file");
  app.add_option("--events", shape.events, "events to write, or to hear")->capture_default_str();
  app.add_option("--pods", shape.pods, "pods of the stream written")->capture_default_str();
  app.add_option("--timeout", timeoutSeconds, "seconds to wait for the events")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (!streamPath.empty()) {
      return writeStream(streamPath, shape);
    }
    if (!kubeconfig.empty()) {
      return watchPods(kubeconfig, shape.events, std::chrono::seconds(timeoutSeconds));
    }
    std::cerr << "give --write-stream or --kubeconfig\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "watch_path_bench: " << e.what() << "\n";
    return 1;
  }
}
