#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <csiop/api/json_access.hpp>
#include <csiop/api/load.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/check.hpp>
#include <csiop/render/render.hpp>

#include "commands.hpp"

namespace csiop::cli {
namespace {

struct RenderOptions {
  std::string file;
  std::string validate = "strict";
  std::string output = "yaml";
  bool legacyCSIDriver = false;
  std::vector<std::string> objectKinds;
};

bool readInput(const std::string& file, Streams& s, std::string& text) {
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(s.in), {});
    return true;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    s.err << "error: cannot read " << file << ": " << std::strerror(errno) << "\n";
    return false;
  }
  text.assign(std::istreambuf_iterator<char>(in), {});
  if (in.bad()) {
    s.err << "error: cannot read " << file << "\n";
    return false;
  }
  return true;
}

int runRender(const RenderOptions& o, Streams& s) {
  std::string text;
  if (!readInput(o.file, s, text)) {
    return 1;
  }
  const auto unknown = o.validate == "strict" ? api::UnknownFields::Strict
                       : o.validate == "warn" ? api::UnknownFields::Warn
                                              : api::UnknownFields::Ignore;
  const auto kinds = objectKinds(o.objectKinds, s.err);
  if (!kinds) {
    return 2;
  }
  const api::Loaded loaded =
      api::loadDriverDeployments(text, unknown, render::admissionCheck(*kinds));
  for (const auto& w : loaded.warnings) {
    s.err << "warning: " << w << "\n";
  }
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) {
      s.err << "error: " << e << "\n";
    }
    return 1;
  }
  render::ClusterFacts facts;
  facts.csiDriverV1 = !o.legacyCSIDriver;
  std::vector<api::Json> objects;
  std::set<std::string> shared; // the objects of every driver at once, printed once
  for (const auto& dd : loaded.objects) {
    for (auto& obj : render::render(dd, facts)) {
      if (render::isShared(obj) && !shared.insert(api::metadataField(obj, "name")).second) {
        continue;
      }
      objects.push_back(std::move(obj));
    }
  }
  if (o.output == "json") {
    api::Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}};
    s.out << list.dump(2) << "\n";
  } else {
    s.out << api::toYamlStream(objects);
  }
  return 0;
}

} // namespace

Command addRender(CLI::App& app) {
  auto opts = std::make_shared<RenderOptions>();
  auto* cmd = app.add_subcommand(
      "render", "Print the Kubernetes objects the operator would apply for DriverDeployments");
  cmd->add_option("-f,--filename", opts->file,
                  "DriverDeployment manifest (YAML or JSON), - for stdin")
      ->required();
  cmd->add_option("--validate", opts->validate,
                  "Unknown fields: strict (error), warn, or ignore (pruned as the API server does)")
      ->check(CLI::IsMember({"strict", "warn", "ignore"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output,
                  "Output format: yaml (a multi-document stream) or json (a List)")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  cmd->add_flag(
      "--legacy-csidriver", opts->legacyCSIDriver,
      "Render the CSIDriver for clusters without storage.k8s.io/v1 (csi.storage.k8s.io/v1alpha1)");
  addObjectKindOption(cmd, opts->objectKinds);
  return [opts](Streams& s) { return runRender(*opts, s); };
}

} // namespace csiop::cli
