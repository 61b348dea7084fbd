# Writes OUTPUT, a ctest script with one test per GoogleTest suite of TEST_EXECUTABLE (named PREFIX + the suite,
# filtered to it), from the executable's --gtest_list_tests. Run after each link of the executable:
#   cmake -D TEST_EXECUTABLE=... -D PREFIX=... -D WORKING_DIRECTORY=... -D OUTPUT=... -P GTestSuites.cmake
# One process per suite instead of one per test: starting a process that loads libtorch costs more than most tests.
# Each computes on one thread (OMP_NUM_THREADS=1): ctest runs suites side by side, and OpenMP pools of several
# threads each, spinning on the same cores, slow one another down many times over (docs/performance.md).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}")
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.")  # a suite (test lines are indented)
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script "add_test([=[${PREFIX}${suite}]=] [=[${TEST_EXECUTABLE}]=] [=[--gtest_filter=${suite}.*]=])\n"
           "set_tests_properties([=[${PREFIX}${suite}]=] PROPERTIES WORKING_DIRECTORY [=[${WORKING_DIRECTORY}]=] "
           "TIMEOUT 1200 ENVIRONMENT OMP_NUM_THREADS=1)\n")
  endif()
endforeach()
file(WRITE "${OUTPUT}" "${script}")
