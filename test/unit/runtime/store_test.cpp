// Store: filled directly, as a test of anything that reads caches can fill one (no server): what
// it keeps, what its indexes find, and what its handlers hear of a list and of watch events.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <csiop/kube/resource.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::runtime {
namespace {

using kube::WatchEvent;
using kube::WatchEventType;

Json pod(const std::string& name, const std::string& node, const std::string& version) {
  return {
      {"metadata",
       {{"name", name},
        {"namespace", "ns"},
        {"resourceVersion", version},
        {"managedFields",
         {{{"manager", "kubelet"}, {"operation", "Update"}, {"fieldsV1", {{"f:status", {}}}}}}}}},
      {"spec", {{"nodeName", node}}},
      {"status", {{"phase", "Running"}}}};
}

class StoreTest : public ::testing::Test {
protected:
  StoreTest() : store_(kube::resources::pods) {
    store_.addIndex("node", [](const Json& p) {
      return std::vector<std::string>{p["spec"].value("nodeName", "")};
    });
    store_.onChange([this](const Json* old, const Json* updated) {
      heard_.push_back(std::string(old ? "old " : "") + (updated ? "new" : "gone"));
    });
  }

  // A list, as a reflector stores it: each item prepared first.
  void list(std::vector<Json> items) {
    std::vector<Json> kept;
    for (Json& item : items) {
      if (store_.prepare(item)) {
        kept.push_back(std::move(item));
      }
    }
    store_.replace(std::move(kept));
  }

  Store store_;
  std::vector<std::string> heard_;
};

TEST_F(StoreTest, KeepsObjectsSelfDescribingWithManagedFieldsCutToTheirManagers) {
  list({pod("a", "n1", "1")});
  const Json* a = store_.get("ns", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["kind"], "Pod");
  EXPECT_EQ((*a)["apiVersion"], "v1");
  EXPECT_EQ((*a)["metadata"]["managedFields"],
            Json::parse(R"([{"manager":"kubelet","operation":"Update"}])"));
  EXPECT_EQ(store_.get("other", "a"), nullptr);
}

TEST_F(StoreTest, IndexesFollowEveryChange) {
  list({pod("a", "n1", "1"), pod("b", "n1", "1"), pod("c", "n2", "1")});
  EXPECT_EQ(store_.countByIndex("node", "n1"), 2u);
  store_.apply(WatchEvent{WatchEventType::Modified, pod("b", "n2", "2")});
  EXPECT_EQ(store_.countByIndex("node", "n1"), 1u);
  EXPECT_EQ(store_.countByIndex("node", "n2"), 2u);
  Json stillOnN1 = pod("a", "n1", "2"); // a change that leaves the index value as it was
  stillOnN1["status"]["phase"] = "Succeeded";
  store_.apply(WatchEvent{WatchEventType::Modified, stillOnN1});
  ASSERT_EQ(store_.byIndex("node", "n1").size(), 1u);
  EXPECT_EQ((*store_.byIndex("node", "n1").front())["status"]["phase"], "Succeeded");
  store_.apply(WatchEvent{WatchEventType::Deleted, pod("c", "n2", "3")});
  ASSERT_EQ(store_.byIndex("node", "n2").size(), 1u);
  EXPECT_EQ((*store_.byIndex("node", "n2").front())["metadata"]["name"], "b");
  EXPECT_TRUE(store_.byIndex("node", "n3").empty());
  EXPECT_THROW(store_.byIndex("zone", "z"), std::logic_error);
}

TEST_F(StoreTest, ARelistTellsTheHandlersEveryDifference) {
  list({pod("a", "n1", "1"), pod("b", "n1", "1")});
  heard_.clear();
  list({pod("b", "n1", "2"), pod("c", "n1", "2")}); // a deleted, b changed, c added meanwhile
  EXPECT_EQ(heard_, (std::vector<std::string>{"old gone", "old new", "new"})); // by key
  heard_.clear();
  list({pod("b", "n1", "2"), pod("c", "n1", "2")}); // the same versions: nothing to hear
  EXPECT_TRUE(heard_.empty());
}

TEST_F(StoreTest, WithATransformAChangeOnlyOfWhatItCutsAwayIsStoredSilently) {
  store_.setTransform([](Json& p) {
    p.erase("status");
    return p["spec"].value("nodeName", "") != "ignored";
  });
  store_.apply(WatchEvent{WatchEventType::Added, pod("a", "n1", "1")});
  Json heartbeat = pod("a", "n1", "2");
  heartbeat["status"]["phase"] = "Succeeded";
  store_.apply(WatchEvent{WatchEventType::Modified, heartbeat});
  EXPECT_EQ(heard_, std::vector<std::string>{"new"});
  EXPECT_EQ((*store_.get("ns", "a"))["metadata"]["resourceVersion"], "2");
  EXPECT_FALSE(store_.get("ns", "a")->contains("status"));
  // An update the transform refuses removes the object, as a deletion.
  store_.apply(WatchEvent{WatchEventType::Modified, pod("a", "ignored", "3")});
  EXPECT_EQ(store_.get("ns", "a"), nullptr);
  EXPECT_EQ(heard_.back(), "old gone");
}

TEST(ManagerSummary, KeepsWhoAndHowOfEachEntry) {
  EXPECT_EQ(managerSummary(Json::parse(
                R"([{"manager":"m","operation":"Apply","subresource":"status","fieldsV1":{}},7])")),
            Json::parse(R"([{"manager":"m","operation":"Apply","subresource":"status"},{}])"));
  EXPECT_EQ(managerSummary(Json("junk")), Json::array());
}

} // namespace
} // namespace csiop::runtime
