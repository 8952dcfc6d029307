// kube/field_mask.hpp: what a cache builds of an object as it parses it.
#include <gtest/gtest.h>

#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/watch.hpp>

namespace csiop::kube {
namespace {

const char* const kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "1", "b": "2"},
               "annotations": {"example.com/x": "y", "big": "zzz"},
               "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}]},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "args": ["-v", 5]}],
           "volumes": [{"name": "v1", "csi": {"driver": "d", "volumeAttributes": {"k": "v"}}},
                       {"name": "v2", "hostPath": {"path": "/x"}}],
           "priority": 1.5, "enableServiceLinks": true, "hostname": null},
  "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
})";

TEST(FieldMask, KeepsWhatItNamesAndNothingElse) {
  const FieldMask mask = FieldMask()
                             .keep({"metadata", "name"})
                             .keep({"metadata", "labels", "b"})
                             .keep({"spec", "nodeName"})
                             .keep({"status"});
  EXPECT_EQ(parseMasked(kPod, mask), Json::parse(R"({
    "metadata": {"name": "p", "labels": {"b": "2"}},
    "spec": {"nodeName": "n1"},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
  })"));
}

TEST(FieldMask, AppliesToEveryElementOfAnArray) {
  const FieldMask mask = FieldMask()
                             .keep({"spec", "volumes", "name"})
                             .keep({"spec", "volumes", "csi", "driver"})
                             .keep({"metadata", "managedFields", "manager"});
  EXPECT_EQ(parseMasked(kPod, mask), Json::parse(R"({
    "metadata": {"managedFields": [{"manager": "kubelet"}]},
    "spec": {"volumes": [{"name": "v1", "csi": {"driver": "d"}}, {"name": "v2"}]}
  })"));
}

// A scalar where the mask goes deeper is kept as it is: what reads the object sees the same
// (unexpected) value it would have seen in the whole object.
TEST(FieldMask, AStarStandsForAnyKey) {
  const FieldMask mask = FieldMask().keep({"metadata", "*", "a"}).keep({"spec", "*"});
  const Json parsed = parseMasked(kPod, mask);
  EXPECT_EQ(parsed["metadata"], Json::parse(R"({"name": "p", "namespace": "ns",
    "labels": {"a": "1"}, "annotations": {}, "managedFields": [{}]})"));
  EXPECT_EQ(parsed["spec"], Json::parse(kPod)["spec"]);
}

TEST(FieldMask, KeepsScalarsOfEveryTypeAndTheWholeValueAtAPathsEnd) {
  const FieldMask mask = FieldMask()
                             .keep({"spec", "containers"})
                             .keep({"spec", "priority"})
                             .keep({"spec", "enableServiceLinks"})
                             .keep({"spec", "hostname"});
  EXPECT_EQ(parseMasked(kPod, mask), Json::parse(R"({"spec": {
    "containers": [{"name": "c", "image": "i", "args": ["-v", 5]}],
    "priority": 1.5, "enableServiceLinks": true, "hostname": null}})"));
  // A longer path under one kept whole changes nothing; a shorter one keeps the whole value.
  const FieldMask wider = FieldMask().keep({"spec", "volumes", "name"}).keep({"spec", "volumes"});
  EXPECT_EQ(parseMasked(kPod, wider)["spec"]["volumes"], Json::parse(kPod)["spec"]["volumes"]);
  const FieldMask same = FieldMask().keep({"spec"}).keep({"spec", "nodeName"});
  EXPECT_EQ(parseMasked(kPod, same)["spec"], Json::parse(kPod)["spec"]);
  EXPECT_EQ(parseMasked(kPod, FieldMask::whole()), Json::parse(kPod));
}

// A path kept as text holds its whole value's minified JSON text in a binary value (which no
// parse of JSON makes), the same from the fast parser and from the whole parse it falls back to.
TEST(FieldMask, APathKeptAsTextHoldsItsValuesText) {
  const FieldMask mask = FieldMask().keep({"metadata", "name"}).keepText({"*"});
  const Json parsed = parseMasked(kPod, mask);
  EXPECT_EQ(parsed["metadata"], (Json{{"name", "p"}}));
  ASSERT_TRUE(textOf(parsed["spec"]).has_value());
  EXPECT_EQ(Json::parse(*textOf(parsed["spec"])), Json::parse(kPod)["spec"]);
  EXPECT_EQ(*textOf(parsed["spec"]), Json::parse(kPod)["spec"].dump()); // minified
  EXPECT_EQ(*textOf(parsed["kind"]), "\"Pod\"");
  EXPECT_FALSE(textOf(parsed["metadata"]).has_value());
  EXPECT_FALSE(textOf(Json("text")).has_value()); // a string is a string
  // An integer beyond 64 bits: the whole parse, then cut; text all the same.
  const Json huge = parseMasked(R"({"n": 123456789012345678901234567890, "m": {"k": [1]}})",
                                FieldMask().keepText({"m"}).keep({"n"}));
  EXPECT_EQ(*textOf(huge["m"]), R"({"k":[1]})");
}

TEST(FieldMask, WithinWrapsAnInnerMask) {
  const FieldMask inner = FieldMask().keep({"metadata", "name"});
  const std::string list = std::string(R"({"kind": "PodList", "metadata": {"resourceVersion": "9"},
    "items": [)") + kPod + "," +
                           kPod + "]}";
  EXPECT_EQ(parseMasked(list, FieldMask::within("items", inner, {"kind", "metadata"})),
            Json::parse(R"({"kind": "PodList", "metadata": {"resourceVersion": "9"},
              "items": [{"metadata": {"name": "p"}}, {"metadata": {"name": "p"}}]})"));
}

TEST(FieldMask, TextThatIsNotJsonIsRefusedEvenInSkippedParts) {
  const FieldMask mask = FieldMask().keep({"metadata", "name"});
  EXPECT_THROW(parseMasked(R"({"metadata": {"name": "p"}, "spec": {"x": [1, 2}})", mask),
               Json::parse_error);
  EXPECT_THROW(parseMasked(R"({"metadata": {"name": "p"}} trailing)", mask), Json::parse_error);
  EXPECT_THROW(parseMasked("", mask), Json::parse_error);
}

// Numbers come out as nlohmann's own parser reads them (the types the readers test for), also
// an integer beyond 64 bits, which the fast parser does not take (a double, masked all the same);
// strings with escapes and non-ASCII text are unescaped alike.
TEST(FieldMask, NumbersAndStringsAreReadAsNlohmannReadsThem) {
  const char* const text = R"({"a": 5, "b": -5, "c": 18446744073709551615, "d": 2.5, "e": 1e3,
    "f": "tab\there \u00e9 \ud83d\ude00", "skipped": {"x": 1}})";
  const Json masked = parseMasked(text, FieldMask().keep({"*"}).keep({"skipped", "y"}));
  const Json whole = Json::parse(text);
  for (const char* key : {"a", "b", "c", "d", "e", "f"}) {
    EXPECT_EQ(masked[key], whole[key]) << key;
    EXPECT_EQ(masked[key].type(), whole[key].type()) << key;
  }
  EXPECT_EQ(masked["skipped"], Json::object());
  const char* const huge = R"({"n": 123456789012345678901234567890, "m": {"k": 1, "l": 2}})";
  const Json cut = parseMasked(huge, FieldMask().keep({"n"}).keep({"m", "k"}));
  EXPECT_EQ(cut, Json::parse(R"({"n": 123456789012345678901234567890, "m": {"k": 1}})"));
  EXPECT_TRUE(cut["n"].is_number_float());
  EXPECT_EQ(parseOrDiscard(huge, nullptr), Json::parse(huge));
  EXPECT_TRUE(parseOrDiscard("{\"n\": [1, 2}", nullptr).is_discarded());
}

TEST(FieldMask, AWatchBuildsOnlyTheMaskOfEachObjectButAllOfAnErrorStatus) {
  const FieldMask mask = FieldMask().keep({"metadata", "name"});
  WatchDecoder decoder(1 << 20, &mask);
  const std::string modified =
      std::string(R"({"type":"MODIFIED","object":)") + Json::parse(kPod).dump() + "}\n";
  const std::string error = R"({"type":"ERROR","object":{"kind":"Status","code":410,)"
                            R"("reason":"Expired","message":"too old"}})"
                            "\n";
  const auto events = decoder.feed(modified + error);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, WatchEventType::Modified);
  EXPECT_EQ(events[0].object, (Json{{"metadata", {{"name", "p"}}}}));
  EXPECT_EQ(events[1].type, WatchEventType::Error);
  EXPECT_TRUE(events[1].isExpired());
  EXPECT_EQ(events[1].object["message"], "too old");
  EXPECT_THROW(decoder.feed("{\"type\":\"ADDED\",\"object\":{\"metadata\":}\n"), TransportError);
}

} // namespace
} // namespace csiop::kube
