#pragma once
// Counting the aten ops a piece of code runs, as torch's profiler lists those without a parent: on a GPU each is
// at least one launch or one pass through the dispatcher, so a small batch's decode step is bound by their number.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace prefix_scorer::bench {

// The top-level aten ops `run` calls on this thread (ops called from inside other ops not counted), by name.
std::map<std::string, int64_t> top_level_ops_by_name(const std::function<void()>& run);

// Their total.
int64_t top_level_ops(const std::function<void()>& run);

}  // namespace prefix_scorer::bench
