// The AdmissionReview exchange: whatever the body, a clear answer and no exception.
#include <gtest/gtest.h>

#include "review_fixtures.hpp"

namespace csiop::webhook {
namespace {

using namespace testing;
using namespace std::chrono_literals;

using Review = WebhookTest;

TEST_F(Review, AnAllowedReviewEchoesTheUid) {
  const auto r = send(reviewBody(request("CREATE", example("hostpath.yaml"), {}, "uid-1")));
  ASSERT_EQ(r.httpStatus, 200);
  EXPECT_EQ(r.contentType, "application/json");
  const Json out = Json::parse(r.body);
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(out["kind"], "AdmissionReview");
  EXPECT_EQ(out["response"]["uid"], "uid-1");
  EXPECT_EQ(out["response"]["allowed"], true);
  EXPECT_FALSE(out["response"].contains("status"));
}

TEST_F(Review, ADenialCarriesCodeReasonAndMessage) {
  cluster.driverDeployments["first"] = "hostpath.csi.k8s.io";
  const auto r = send(reviewBody(request("CREATE", hostpath("second", "hostpath.csi.k8s.io"))));
  ASSERT_EQ(r.httpStatus, 200);
  const Json response = Json::parse(r.body)["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 403);
  EXPECT_EQ(response["status"]["reason"], "Forbidden");
  EXPECT_NE(response["status"]["message"].get<std::string>().find("DriverDeployment \"first\""),
            std::string::npos);
}

TEST_F(Review, WarningsAreReturned) {
  Json dd = example("hostpath.yaml");
  dd["spec"].erase("controller");
  const Json response = Json::parse(send(reviewBody(request("CREATE", dd))).body)["response"];
  EXPECT_EQ(response["allowed"], true);
  EXPECT_EQ(response["warnings"].size(), 1u);
}

TEST_F(Review, BodiesThatAreNotAdmissionReviewsGetA400) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "malformed JSON"},
      {"{\"apiVersion\": ", "malformed JSON"},
      {"\xff\xfe", "malformed JSON"},
      {"[1, 2]", "expected an admission.k8s.io/v1 AdmissionReview"},
      {R"({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}})",
       "expected an admission.k8s.io/v1 AdmissionReview"},
      {R"({"apiVersion": "v1", "kind": "ConfigMap"})",
       "expected an admission.k8s.io/v1 AdmissionReview"},
      {R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})",
       "the AdmissionReview has no request"},
      {R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": 7})",
       "the AdmissionReview has no request"},
      {R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}})",
       "the AdmissionReview request has no uid"},
  };
  for (const auto& [body, message] : cases) {
    const auto r = send(body);
    EXPECT_EQ(r.httpStatus, 400) << body;
    EXPECT_EQ(r.contentType, "text/plain; charset=utf-8");
    EXPECT_NE(r.body.find(message), std::string::npos) << body << " -> " << r.body;
  }
}

TEST_F(Review, FieldsOfTheWrongTypeAreDeniedNotCrashedOn) {
  for (
      const char* request :
      {R"({"uid": "u", "kind": "DriverDeployment", "operation": "CREATE", "object": {}})",
       R"({"uid": "u", "kind": {"group": "csiop.dev", "kind": "DriverDeployment"}, "operation": 5})",
       R"({"uid": "u", "kind": {"group": "csiop.dev", "kind": "DriverDeployment"}, "operation": "CREATE", "object": "x"})",
       R"({"uid": "u", "kind": {"group": "csiop.dev", "kind": "DriverDeployment"}, "operation": "CREATE", "object": {"metadata": 3, "spec": []}})",
       R"({"uid": "u", "kind": {"group": "csiop.dev", "kind": "DriverDeployment"}, "operation": "UPDATE", "object": {"metadata": {"name": "n"}, "spec": {"driverName": "a.b", "driver": {"image": "i"}}}, "oldObject": {"spec": {"driverName": 1}}})"}) {
    const std::string body =
        R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": )" +
        std::string(request) + "}";
    const auto r = send(body);
    ASSERT_EQ(r.httpStatus, 200) << request << " -> " << r.body;
    const Json response = Json::parse(r.body)["response"];
    EXPECT_EQ(response["uid"], "u");
    EXPECT_TRUE(response["allowed"].is_boolean());
  }
}

TEST_F(Review, HostileJsonIsRefusedNotCrashedOn) {
  // A number out of a double's range.
  auto r = send("1e309");
  EXPECT_EQ(r.httpStatus, 400);
  EXPECT_NE(r.body.find("malformed JSON"), std::string::npos) << r.body;
  // Nesting that would exhaust the stack when copied or destroyed.
  Json dd = example("hostpath.yaml");
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string body = reviewBody(request("CREATE", dd));
  body.replace(body.find("\"spec\":{"), 8, "\"x\":" + deep + ",\"spec\":{");
  r = send(body);
  EXPECT_EQ(r.httpStatus, 400);
  EXPECT_NE(r.body.find("nested deeper than 200 levels"), std::string::npos)
      << r.body.substr(0, 200);
  // Bytes that are not text are not echoed back.
  r = send("{\"a\": \xff\xfe}");
  EXPECT_EQ(r.httpStatus, 400);
  for (const char c : r.body) {
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
  }
}

TEST_F(Review, AHugeQuantityIsDeniedNotCrashedOn) {
  // The CRD's pattern has no length limit, so the API server lets this through to the webhook;
  // a recursive regex over 30,000 digits used to overflow the stack.
  Json dd = example("hostpath.yaml");
  dd["spec"]["driver"]["resources"] = {{"limits", {{"cpu", std::string(30000, '9')}}}};
  const auto r = send(reviewBody(request("CREATE", dd)));
  ASSERT_EQ(r.httpStatus, 200);
  const Json response = Json::parse(r.body)["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 422);
}

TEST_F(Review, AnOversizedBodyIsRefusedUnread) {
  const std::string huge(kMaxReviewBytes + 1, ' ');
  const auto r = send(huge);
  EXPECT_EQ(r.httpStatus, 413);
  EXPECT_NE(r.body.find("over the limit of " + std::to_string(kMaxReviewBytes)), std::string::npos);
}

} // namespace
} // namespace csiop::webhook
