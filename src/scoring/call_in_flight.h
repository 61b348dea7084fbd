#pragma once
// A scorer call's lifetime as cancel() sees it: a stale cancel request is dropped when the call starts, and the
// call counts as running until it returns or throws.

#include <atomic>

namespace prefix_scorer {

class CallInFlight {
 public:
  CallInFlight(std::atomic<bool>& running, std::atomic<bool>& cancel) : running_(running) {
    cancel = false;
    running = true;
  }
  ~CallInFlight() { running_ = false; }
  CallInFlight(const CallInFlight&) = delete;
  CallInFlight& operator=(const CallInFlight&) = delete;

 private:
  std::atomic<bool>& running_;
};

}  // namespace prefix_scorer
