#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

int main(int argc, char** argv) {
  at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
