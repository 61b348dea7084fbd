#pragma once
// An LRU store of prefix KV segments, keyed by their tokens and rope variant, with budgets in bytes and in entries.

#include "model/cache/kv_cache.h"
#include "model/forward_batch.h"
#include "prefix_scorer/types.h"

#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace prefix_scorer {

// The keys and values of tokens [begin, tokens.size()) of a prefix; the tokens before `begin` live in `parent`,
// so nested prefixes share their common part instead of copying it.
struct PrefixEntry {
  TokenIds tokens;                      // the whole prefix
  int64_t rope_variant = 0;             // the rope variant its keys rotate by (ForwardBatch::rope_variant)
  std::shared_ptr<PrefixEntry> parent;  // holds tokens [0, begin); null when begin is 0
  int64_t begin = 0;
  std::vector<LayerCache> layers;  // [1, heads, tokens.size() - begin, width] tensors per layer, on its device
  int64_t bytes = 0;
  int64_t pins = 0;      // batches using it now; a pinned entry is never evicted
  int64_t children = 0;  // entries in the cache whose parent it is; only leaves are evicted
  int64_t depth() const { return static_cast<int64_t>(tokens.size()); }
};

using EntryPtr = std::shared_ptr<PrefixEntry>;

class PrefixCache {
 public:
  PrefixCache(int64_t max_bytes, int64_t max_entries) : max_bytes_(max_bytes), max_entries_(max_entries) {}

  // The entry holding exactly these tokens under this rope variant, or null; a hit becomes the most recently used.
  EntryPtr find(const TokenIds& tokens, int64_t rope_variant = 0);
  // Whether `count` more entries of `bytes` in all could be inserted after evicting unpinned leaves.
  bool can_fit(int64_t bytes, int64_t count = 1) const;
  // Whether they fit in the room that is free now, evicting nothing.
  bool has_room(int64_t bytes, int64_t count = 1) const {
    return bytes_ + bytes <= max_bytes_ && entries() + count <= max_entries_;
  }
  // Evicts least recently used unpinned leaves until `bytes` more fit, then adds the entry; false (nothing
  // evicted) when it cannot fit or an entry with the same tokens and variant is cached already.
  bool insert(const EntryPtr& entry);
  // Drops an entry that is not pinned and has no children in the cache.
  void erase(const EntryPtr& entry);
  void clear();

  int64_t bytes() const { return bytes_; }
  int64_t entries() const { return static_cast<int64_t>(lru_.size()); }
  int64_t pinned() const;  // entries with pins
  int64_t evictions() const { return evictions_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  void reset_peak() { peak_bytes_ = bytes_; }

 private:
  using Key = std::pair<int64_t, TokenIds>;  // (rope variant, tokens)
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  static Key key_of(const PrefixEntry& entry) { return {entry.rope_variant, entry.tokens}; }
  void drop(std::list<EntryPtr>::iterator it);
  // Bytes and entries that evicting every unpinned leaf, repeatedly, would free.
  std::pair<int64_t, int64_t> evictable() const;

  int64_t max_bytes_, max_entries_;
  int64_t bytes_ = 0, peak_bytes_ = 0, evictions_ = 0;
  std::list<EntryPtr> lru_;  // most recently used first
  std::unordered_map<Key, std::list<EntryPtr>::iterator, KeyHash> index_;
};

}  // namespace prefix_scorer
