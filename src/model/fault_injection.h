#pragma once
// Test-only fault injection: makes a chosen model forward throw, to test that a failure in the middle of a call
// leaves the scorer sound, or breaks a recurrent state's snapshot. Off unless a test arms it; an atomic load per
// forward otherwise.

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

// Breaks what a recurrent layer keeps of a right-padded row, on purpose, to show that the tests catch it: its state
// and convolution history taken one token late (after the first padding token), or every padding token let into
// them. Stays until set back to kNone.
enum class StateFault { kNone, kOneTokenLate, kPaddingLetIn };
void break_state_snapshot(StateFault fault);
StateFault state_fault();

}  // namespace prefix_scorer::testing
