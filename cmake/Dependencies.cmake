# Locates libtorch, fmt, nlohmann-json, PCRE2 and utf8proc. Debian's packages are found through their CMake configs; a pip torch
# build finds fmt among torch's own headers, and nlohmann-json in PREFIX_SCORER_JSON_INCLUDE_DIR.
include(GNUInstallDirs)

find_package(Torch REQUIRED)
message(STATUS "prefix_scorer: torch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")

add_library(prefix_scorer_fmt INTERFACE)
find_package(fmt QUIET)
if(fmt_FOUND)
  target_link_libraries(prefix_scorer_fmt INTERFACE fmt::fmt)
else()
  find_path(PREFIX_SCORER_FMT_INCLUDE_DIR fmt/format.h HINTS ${TORCH_INCLUDE_DIRS} REQUIRED)
  target_include_directories(prefix_scorer_fmt INTERFACE ${PREFIX_SCORER_FMT_INCLUDE_DIR})
  target_compile_definitions(prefix_scorer_fmt INTERFACE FMT_HEADER_ONLY=1)
  message(STATUS "prefix_scorer: header-only fmt from ${PREFIX_SCORER_FMT_INCLUDE_DIR}")
endif()

add_library(prefix_scorer_json INTERFACE)
find_package(nlohmann_json 3 QUIET)
if(nlohmann_json_FOUND)
  target_link_libraries(prefix_scorer_json INTERFACE nlohmann_json::nlohmann_json)
else()
  set(PREFIX_SCORER_JSON_INCLUDE_DIR "" CACHE PATH "Folder holding nlohmann/json.hpp")
  find_path(PREFIX_SCORER_JSON_FOUND_DIR nlohmann/json.hpp HINTS ${PREFIX_SCORER_JSON_INCLUDE_DIR} REQUIRED)
  target_include_directories(prefix_scorer_json INTERFACE ${PREFIX_SCORER_JSON_FOUND_DIR})
endif()

# The tokenizer's regexes and Unicode normalisation.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
