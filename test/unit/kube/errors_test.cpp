#include <gtest/gtest.h>

#include <csiop/kube/errors.hpp>

namespace csiop::kube {
namespace {

ApiError fromBody(int code, std::string_view body, std::string_view retryAfter = "") {
  return ApiError(code, statusFromResponse(code, body), "PUT /x", parseRetryAfter(retryAfter));
}

TEST(ApiError, CarriesTheStatusOfAnInvalidObject) {
  const auto e = fromBody(422, R"({"kind":"Status","apiVersion":"v1","metadata":{},
    "status":"Failure","message":"ConfigMap \"x\" is invalid: metadata.name: Invalid value",
    "reason":"Invalid","details":{"name":"x","kind":"ConfigMap","causes":[
      {"reason":"FieldValueInvalid","message":"Invalid value: \"X\"","field":"metadata.name"},
      {"reason":"FieldValueRequired","message":"Required value","field":"data"}]},"code":422})");
  EXPECT_EQ(e.code(), 422);
  EXPECT_TRUE(e.isInvalid());
  EXPECT_FALSE(e.isConflict());
  EXPECT_EQ(e.reason(), "Invalid");
  EXPECT_EQ(e.status().details.name, "x");
  EXPECT_EQ(e.status().details.kind, "ConfigMap");
  ASSERT_EQ(e.causes().size(), 2u);
  EXPECT_EQ(e.causes()[0].type, "FieldValueInvalid");
  EXPECT_EQ(e.causes()[0].field, "metadata.name");
  EXPECT_EQ(e.causes()[1].message, "Required value");
  EXPECT_EQ(std::string(e.what()),
            "PUT /x: 422 Invalid: ConfigMap \"x\" is invalid: metadata.name: Invalid value");
}

TEST(ApiError, TellsAlreadyExistsFromConflict) {
  const auto exists = fromBody(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})");
  EXPECT_TRUE(exists.isAlreadyExists());
  EXPECT_FALSE(exists.isConflict());
  const auto conflict = fromBody(409, R"({"kind":"Status","reason":"Conflict","code":409,
    "message":"the object has been modified; please apply your changes to the latest version"})");
  EXPECT_TRUE(conflict.isConflict());
  EXPECT_FALSE(conflict.isAlreadyExists());
}

TEST(ApiError, HelpersMatchReasonsAndCodes) {
  EXPECT_TRUE(fromBody(404, R"({"kind":"Status","reason":"NotFound","code":404})").isNotFound());
  EXPECT_TRUE(fromBody(410, R"({"kind":"Status","reason":"Expired","code":410})").isGone());
  EXPECT_TRUE(fromBody(410, R"({"kind":"Status","reason":"Gone","code":410})").isGone());
  EXPECT_TRUE(fromBody(403, R"({"kind":"Status","reason":"Forbidden","code":403})").isForbidden());
  EXPECT_TRUE(fromBody(401, "Unauthorized").isUnauthorized());
  EXPECT_TRUE(fromBody(400, R"({"kind":"Status","reason":"BadRequest"})").isBadRequest());
  EXPECT_TRUE(fromBody(500, "boom").isServerError());
  EXPECT_TRUE(fromBody(503, "").isServerError());
  EXPECT_FALSE(fromBody(404, "").isServerError());
  // An unknown reason falls back to the code; a known one decides.
  EXPECT_TRUE(fromBody(404, R"({"kind":"Status","reason":"","code":404})").isNotFound());
  EXPECT_TRUE(fromBody(404, R"({"kind":"Status","reason":"Unknown","code":404})").isNotFound());
  EXPECT_FALSE(fromBody(404, R"({"kind":"Status","reason":"Forbidden"})").isNotFound());
}

TEST(ApiError, SynthesizesAStatusForBodiesThatAreNotOne) {
  const auto e = fromBody(502, "<html>\nBad gateway</html>");
  EXPECT_EQ(e.status().code, 502);
  EXPECT_EQ(e.reason(), "InternalError");
  EXPECT_EQ(e.status().message, "<html>");
  EXPECT_TRUE(e.isServerError());
  const auto empty = fromBody(404, "");
  EXPECT_TRUE(empty.isNotFound());
  EXPECT_EQ(empty.status().message, "the server answered 404 with no body");
  const auto notStatus = fromBody(409, R"({"kind":"ConfigMap"})");
  EXPECT_TRUE(notStatus.isConflict());
  const auto longLine = fromBody(500, std::string(500, 'x'));
  EXPECT_EQ(longLine.status().message.size(), 203u);
}

TEST(ApiError, RetryAfterFromHeaderElseFromDetails) {
  const std::string body =
      R"({"kind":"Status","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":7}})";
  const auto fromDetails = fromBody(429, body);
  EXPECT_TRUE(fromDetails.isTooManyRequests());
  ASSERT_TRUE(fromDetails.retryAfter());
  EXPECT_EQ(fromDetails.retryAfter()->count(), 7);
  const auto fromHeader = fromBody(429, body, "3");
  EXPECT_EQ(fromHeader.retryAfter()->count(), 3);
  EXPECT_FALSE(fromBody(404, "").retryAfter());
}

TEST(ApiError, RetryWaitIsTheRetryAfterOfA429OrA5xxCapped) {
  const std::string tooMany = R"({"kind":"Status","reason":"TooManyRequests","code":429})";
  EXPECT_EQ(fromBody(429, tooMany, "2").retryWait(), std::chrono::seconds(2));
  EXPECT_EQ(fromBody(429, tooMany).retryWait(), std::chrono::seconds(0)) << "none asked for";
  const std::string unavailable =
      R"({"kind":"Status","reason":"ServiceUnavailable","code":503,"details":{"retryAfterSeconds":5}})";
  EXPECT_EQ(fromBody(503, unavailable).retryWait(), std::chrono::seconds(5));
  EXPECT_EQ(fromBody(500, "", "1").retryWait(), std::chrono::seconds(1));
  // Only where client-go honours it: not on a conflict that happens to carry one.
  EXPECT_EQ(fromBody(409, "", "3").retryWait(), std::chrono::seconds(0));
  EXPECT_EQ(fromBody(429, tooMany, "3600").retryWait(), kMaxRetryAfter);
}

TEST(ParseRetryAfter, AcceptsDeltaSecondsOnly) {
  EXPECT_EQ(parseRetryAfter("1")->count(), 1);
  EXPECT_EQ(parseRetryAfter(" 120 ")->count(), 120);
  EXPECT_FALSE(parseRetryAfter(""));
  EXPECT_FALSE(parseRetryAfter("-1"));
  EXPECT_FALSE(parseRetryAfter("1.5"));
  EXPECT_FALSE(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));
}

TEST(Status, IsTolerantOfWrongTypes) {
  const auto s = Status::fromJson(Json::parse(
      R"({"kind":"Status","code":"x","reason":5,"details":{"causes":"no","retryAfterSeconds":"1"}})"));
  EXPECT_EQ(s.code, 0);
  EXPECT_EQ(s.reason, "");
  EXPECT_TRUE(s.details.causes.empty());
  EXPECT_FALSE(s.details.retryAfterSeconds);
  EXPECT_TRUE(Status::isStatus(Json::parse(R"({"kind":"Status"})")));
  EXPECT_FALSE(Status::isStatus(Json::parse("[]")));
}

TEST(TransportError, HasAKind) {
  const TransportError e(TransportError::Kind::Timeout, "GET /x: no response within 10 ms");
  EXPECT_EQ(e.kind(), TransportError::Kind::Timeout);
  EXPECT_EQ(toString(e.kind()), "timeout");
  EXPECT_STREQ(e.what(), "GET /x: no response within 10 ms");
}

} // namespace
} // namespace csiop::kube
