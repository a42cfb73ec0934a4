// ArtifactCache: built kernels kept in memory by a hex SHA-256 key, least
// recently used first out once their bytes exceed a capacity. The one cache
// of the fleet: the builder keys built artifacts by the hash of the build
// request (so a repeated request is answered with no build), the device
// agent by the artifact's content hash (so the tracker sends each artifact's
// bytes once).
//
//   ArtifactCache cache(/*capacity_bytes=*/256 << 20);
//   cache.Insert(hash, CachedArtifact{.entry_name = "tf_dense", .bytes = so, .hash = hash});
//   if (std::shared_ptr<const CachedArtifact> hit = cache.Lookup(hash)) { ... hit->bytes ... }
//
// Capacity counts CachedArtifact::bytes only. An artifact larger than the
// whole capacity is not kept (capacity 0 keeps nothing). Entries are
// immutable and shared: a Lookup result stays valid after eviction.
//
// Thread-safe.
#ifndef TUNEFLEET_COMMON_ARTIFACT_CACHE_H_
#define TUNEFLEET_COMMON_ARTIFACT_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {

struct CachedArtifact {
  std::string entry_name;  // exported kernel symbol; empty where the user does not keep it
  std::string bytes;       // the .so, or the GPU artifact
  std::string hash;        // hex SHA-256 of `bytes`
};

class ArtifactCache {
 public:
  explicit ArtifactCache(int64_t capacity_bytes);

  ArtifactCache(const ArtifactCache&) = delete;
  ArtifactCache& operator=(const ArtifactCache&) = delete;

  // Keeps `artifact` under `key` as the most recently used entry, evicting
  // the least recently used ones beyond the capacity. A key already present
  // keeps its entry (same key, same content) and becomes the most recent.
  void Insert(const std::string& key, CachedArtifact artifact);

  // The entry under `key`, now the most recently used, or null; counts a hit.
  std::shared_ptr<const CachedArtifact> Lookup(const std::string& key);

  // Whether `key` is present; changes neither the order nor the hit count.
  bool Contains(const std::string& key) const;

  int64_t capacity_bytes() const { return capacity_bytes_; }
  int64_t entries() const;
  int64_t bytes() const;  // sum of the entries' bytes, <= capacity_bytes()
  int64_t hits() const;   // Lookups that found their key

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const CachedArtifact>>;

  const int64_t capacity_bytes_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_ARTIFACT_CACHE_H_
