#pragma once
// Test-only fault injection: makes a chosen model forward throw, to test that a failure in the middle of a call
// leaves the scorer sound. Off unless a test arms it; one atomic load per forward otherwise.

#include <cstdint>

namespace prefix_scorer::testing {

enum class ForwardFault {
  out_of_memory,  // c10::OutOfMemoryError, as the CUDA caching allocator throws it
  torch_error,    // a plain c10::Error, as a failed TORCH_CHECK throws it
};

// The `nth` model forward from now (1: the next) throws `fault`, once. 0 disarms.
void fail_forward(int64_t nth, ForwardFault fault);

// Called by every model forward: throws when this forward is the armed one.
void forward_fault_point();

}  // namespace prefix_scorer::testing
