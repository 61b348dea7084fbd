#include "scoring/prefix_cache.h"

#include <algorithm>

namespace prefix_scorer {

size_t PrefixCache::KeyHash::operator()(const Key& key) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the variant and the ids
  h = (h ^ static_cast<uint64_t>(key.first)) * 1099511628211ull;
  for (int64_t id : key.second) h = (h ^ static_cast<uint64_t>(id)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

EntryPtr PrefixCache::find(const TokenIds& tokens, int64_t rope_variant) {
  auto it = index_.find({rope_variant, tokens});  // the hash finds the bucket, the tokens are compared in full
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return *it->second;
}

int64_t PrefixCache::pinned() const {
  return std::count_if(lru_.begin(), lru_.end(), [](const EntryPtr& e) { return e->pins > 0; });
}

std::pair<int64_t, int64_t> PrefixCache::evictable() const {
  // An unpinned entry whose whole subtree in the cache is unpinned can go (leaves first).
  std::unordered_map<const PrefixEntry*, bool> blocked;
  for (const auto& e : lru_) {
    if (e->pins == 0) continue;
    for (const PrefixEntry* p = e.get(); p != nullptr; p = p->parent.get()) blocked[p] = true;
  }
  int64_t bytes = 0, count = 0;
  for (const auto& e : lru_) {
    if (!blocked.count(e.get())) bytes += e->bytes, ++count;
  }
  return {bytes, count};
}

bool PrefixCache::can_fit(int64_t bytes, int64_t count) const {
  const auto [free_bytes, free_entries] = evictable();
  return bytes <= max_bytes_ - bytes_ + free_bytes && entries() - free_entries + count <= max_entries_;
}

bool PrefixCache::insert(const EntryPtr& entry) {
  if (index_.count(key_of(*entry)) != 0 || !can_fit(entry->bytes)) return false;
  while (bytes_ + entry->bytes > max_bytes_ || entries() >= max_entries_) {
    auto victim = lru_.end();
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
      if ((*it)->pins == 0 && (*it)->children == 0) victim = it;  // the least recent such leaf wins
    }
    drop(victim);
    ++evictions_;
  }
  lru_.push_front(entry);
  index_[key_of(*entry)] = lru_.begin();
  if (entry->parent) ++entry->parent->children;
  bytes_ += entry->bytes;
  peak_bytes_ = std::max(peak_bytes_, bytes_);
  return true;
}

void PrefixCache::erase(const EntryPtr& entry) {
  auto it = index_.find(key_of(*entry));
  if (it != index_.end() && *it->second == entry && entry->pins == 0 && entry->children == 0) drop(it->second);
}

void PrefixCache::drop(std::list<EntryPtr>::iterator it) {
  const EntryPtr entry = *it;
  if (entry->parent) --entry->parent->children;
  bytes_ -= entry->bytes;
  index_.erase(key_of(*entry));
  lru_.erase(it);
}

void PrefixCache::clear() {
  lru_.clear();
  index_.clear();
  bytes_ = 0;
}

}  // namespace prefix_scorer
