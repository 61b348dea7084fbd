#include "model/fault_injection.h"

#include <c10/util/Exception.h>

#include <atomic>

namespace prefix_scorer::testing {
namespace {

std::atomic<int64_t> forwards_left{0};
std::atomic<ForwardFault> armed_fault{ForwardFault::torch_error};
std::atomic<StateFault> broken_snapshot{StateFault::kNone};

}  // namespace

void fail_forward(int64_t nth, ForwardFault fault) {
  armed_fault = fault;
  forwards_left = nth < 0 ? 0 : nth;
}

void forward_fault_point() {
  if (forwards_left.load(std::memory_order_relaxed) == 0) return;
  if (forwards_left.fetch_sub(1) != 1) return;
  const c10::SourceLocation here{__func__, __FILE__, static_cast<uint32_t>(__LINE__)};
  if (armed_fault == ForwardFault::out_of_memory) throw c10::OutOfMemoryError(here, "injected out of memory");
  throw c10::Error(here, "injected torch error");
}

void break_state_snapshot(StateFault fault) { broken_snapshot = fault; }

StateFault state_fault() { return broken_snapshot.load(std::memory_order_relaxed); }

}  // namespace prefix_scorer::testing
