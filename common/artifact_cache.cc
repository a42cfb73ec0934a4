#include "common/artifact_cache.h"

#include <utility>

namespace tunefleet {

ArtifactCache::ArtifactCache(int64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

void ArtifactCache::Insert(const std::string& key, CachedArtifact artifact) {
  const int64_t size = static_cast<int64_t>(artifact.bytes.size());
  if (size > capacity_bytes_) return;
  auto entry = std::make_shared<const CachedArtifact>(std::move(artifact));
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, std::move(entry));
  index_[key] = lru_.begin();
  bytes_ += size;
  while (bytes_ > capacity_bytes_) {
    bytes_ -= static_cast<int64_t>(lru_.back().second->bytes.size());
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

std::shared_ptr<const CachedArtifact> ArtifactCache::Lookup(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  ++hits_;
  return it->second->second;
}

bool ArtifactCache::Contains(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  return index_.contains(key);
}

int64_t ArtifactCache::entries() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(lru_.size());
}

int64_t ArtifactCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

int64_t ArtifactCache::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

}  // namespace tunefleet
