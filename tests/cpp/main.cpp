#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  // A thread per core, unless OMP_NUM_THREADS says otherwise (ctest sets 1: it runs suites side by side).
  if (std::getenv("OMP_NUM_THREADS") == nullptr)
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
