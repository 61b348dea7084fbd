#include "op_count.h"

#include <ATen/record_function.h>

#include <memory>

namespace prefix_scorer::bench {
namespace {

thread_local int64_t depth = 0;  // ops in progress on this thread
thread_local std::map<std::string, int64_t>* counts = nullptr;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (depth++ == 0 && counts != nullptr) ++(*counts)[fn.name()];
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) { --depth; }

}  // namespace

std::map<std::string, int64_t> top_level_ops_by_name(const std::function<void()>& run) {
  std::map<std::string, int64_t> by_name;
  depth = 0;
  counts = &by_name;
  const at::CallbackHandle handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION}));
  try {
    run();
  } catch (...) {
    at::removeCallback(handle);
    counts = nullptr;
    throw;
  }
  at::removeCallback(handle);
  counts = nullptr;
  return by_name;
}

int64_t top_level_ops(const std::function<void()>& run) {
  int64_t total = 0;
  for (const auto& [name, count] : top_level_ops_by_name(run)) total += count;
  return total;
}

}  // namespace prefix_scorer::bench
