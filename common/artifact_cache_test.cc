#include "common/artifact_cache.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

CachedArtifact Bytes(const std::string& bytes) {
  return CachedArtifact{"entry", bytes, "hash-of-" + bytes};
}

TEST(ArtifactCacheTest, LookupReturnsWhatWasInsertedAndCountsHits) {
  ArtifactCache cache(100);
  EXPECT_EQ(cache.Lookup("a"), nullptr);
  cache.Insert("a", Bytes("abcdef"));
  std::shared_ptr<const CachedArtifact> hit = cache.Lookup("a");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->entry_name, "entry");
  EXPECT_EQ(hit->bytes, "abcdef");
  EXPECT_EQ(hit->hash, "hash-of-abcdef");
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.entries(), 1);
  EXPECT_EQ(cache.bytes(), 6);
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_EQ(cache.hits(), 1);  // Contains is not a hit
}

TEST(ArtifactCacheTest, EvictsTheLeastRecentlyUsedBeyondTheCapacity) {
  ArtifactCache cache(10);
  cache.Insert("a", Bytes("aaaa"));
  cache.Insert("b", Bytes("bbbb"));
  ASSERT_NE(cache.Lookup("a"), nullptr);  // now b is the oldest
  cache.Insert("c", Bytes("cccc"));
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_TRUE(cache.Contains("c"));
  EXPECT_EQ(cache.bytes(), 8);
  EXPECT_EQ(cache.entries(), 2);
}

TEST(ArtifactCacheTest, ReinsertingAKeyKeepsOneEntryAndRefreshesIt) {
  ArtifactCache cache(10);
  cache.Insert("a", Bytes("aaaa"));
  cache.Insert("b", Bytes("bbbb"));
  cache.Insert("a", Bytes("aaaa"));  // a becomes the most recent
  EXPECT_EQ(cache.entries(), 2);
  EXPECT_EQ(cache.bytes(), 8);
  cache.Insert("c", Bytes("cccc"));
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
}

TEST(ArtifactCacheTest, ArtifactLargerThanTheCapacityIsNotKept) {
  ArtifactCache cache(5);
  cache.Insert("small", Bytes("1234"));
  cache.Insert("big", Bytes("123456"));
  EXPECT_FALSE(cache.Contains("big"));
  EXPECT_TRUE(cache.Contains("small"));  // and nothing was evicted for it
  ArtifactCache none(0);
  none.Insert("a", Bytes("x"));
  EXPECT_EQ(none.entries(), 0);
}

TEST(ArtifactCacheTest, LookupResultOutlivesEviction) {
  ArtifactCache cache(4);
  cache.Insert("a", Bytes("aaaa"));
  std::shared_ptr<const CachedArtifact> kept = cache.Lookup("a");
  cache.Insert("b", Bytes("bbbb"));
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_EQ(kept->bytes, "aaaa");
}

TEST(ArtifactCacheTest, ConcurrentUseKeepsTheByteCountExact) {
  ArtifactCache cache(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string key = absl::StrCat(t, "-", i % 20);
        cache.Insert(key, Bytes(std::string(1 + i % 7, 'x')));
        cache.Lookup(absl::StrCat((t + 1) % 4, "-", i % 20));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.bytes(), 64);
  EXPECT_GT(cache.entries(), 0);
}

}  // namespace
}  // namespace tunefleet
