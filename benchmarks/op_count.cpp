#include "op_count.h"

#include <ATen/record_function.h>

#include <memory>

namespace prefix_scorer::bench {
namespace {

thread_local int64_t depth = 0;   // ops in progress on this thread
thread_local int64_t counted = 0;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  if (depth++ == 0) ++counted;
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) { --depth; }

}  // namespace

int64_t top_level_ops(const std::function<void()>& run) {
  depth = 0;
  counted = 0;
  const at::CallbackHandle handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION}));
  try {
    run();
  } catch (...) {
    at::removeCallback(handle);
    throw;
  }
  at::removeCallback(handle);
  return counted;
}

}  // namespace prefix_scorer::bench
