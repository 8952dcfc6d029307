#include <csiop/api/annotations.hpp>

namespace csiop::api {
namespace {

Json annotationsOf(const Json& object) {
  if (!object.is_object()) {
    return Json::object();
  }
  const Json annotations =
      object.value("metadata", Json::object()).value("annotations", Json::object());
  return annotations.is_object() ? annotations : Json::object();
}

} // namespace

Flag flagAnnotation(const Json& object, const char* annotation) {
  const Json annotations = annotationsOf(object);
  if (!annotations.contains(annotation)) {
    return Flag::No;
  }
  const Json& value = annotations[annotation];
  if (value == "true") {
    return Flag::Yes;
  }
  return value == "false" ? Flag::No : Flag::Invalid;
}

std::string annotationValue(const Json& object, const char* annotation) {
  const Json value = annotationsOf(object).value(annotation, Json());
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::string invalidFlagMessage(const Json& object, const char* annotation,
                               const std::string& what) {
  const Json value = annotationsOf(object).value(annotation, Json());
  return "annotation " + std::string(annotation) + " on " + what + " is " +
         (value.is_string() ? "\"" + value.get<std::string>() + "\""
                            : value.dump(-1, ' ', false, Json::error_handler_t::replace)) +
         ", not \"true\" or \"false\"";
}

} // namespace csiop::api
