# Locates torch (see TorchPackage.cmake), fmt, nlohmann-json, PCRE2 and utf8proc. nlohmann-json, PCRE2 and utf8proc
# come from Debian's packages; nlohmann-json may also come from PREFIX_SCORER_JSON_INCLUDE_DIR.
include(TorchPackage)

# fmt: the headers torch ships (torch's include folder is on every torch target's path already, so a second fmt
# would be shadowed by it), used header-only.
add_library(prefix_scorer_fmt INTERFACE)
find_path(PREFIX_SCORER_FMT_INCLUDE_DIR fmt/format.h HINTS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH REQUIRED)
target_include_directories(prefix_scorer_fmt INTERFACE ${PREFIX_SCORER_FMT_INCLUDE_DIR})
target_compile_definitions(prefix_scorer_fmt INTERFACE FMT_HEADER_ONLY=1)

add_library(prefix_scorer_json INTERFACE)
find_package(nlohmann_json 3 QUIET)
if(nlohmann_json_FOUND)
  target_link_libraries(prefix_scorer_json INTERFACE nlohmann_json::nlohmann_json)
else()
  set(PREFIX_SCORER_JSON_INCLUDE_DIR "" CACHE PATH "Folder holding nlohmann/json.hpp")
  find_path(PREFIX_SCORER_JSON_FOUND_DIR nlohmann/json.hpp HINTS ${PREFIX_SCORER_JSON_INCLUDE_DIR} REQUIRED)
  target_include_directories(prefix_scorer_json INTERFACE ${PREFIX_SCORER_JSON_FOUND_DIR})
endif()

# The tokenizer's regexes and Unicode normalisation. Where they are missing (a GPU machine without Debian's
# packages), the library builds without the native tokenizer and says so when one is asked for.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
  pkg_check_modules(UTF8PROC QUIET IMPORTED_TARGET libutf8proc)
endif()
if(PCRE2_FOUND AND UTF8PROC_FOUND)
  set(PREFIX_SCORER_TOKENIZER_DEFAULT ON)
else()
  set(PREFIX_SCORER_TOKENIZER_DEFAULT OFF)
endif()
option(PREFIX_SCORER_TOKENIZER "Build the native tokenizer (needs PCRE2 and utf8proc)" ${PREFIX_SCORER_TOKENIZER_DEFAULT})
if(PREFIX_SCORER_TOKENIZER AND NOT (PCRE2_FOUND AND UTF8PROC_FOUND))
  message(FATAL_ERROR "PREFIX_SCORER_TOKENIZER needs libpcre2-dev and libutf8proc-dev (pkg-config)")
endif()
if(NOT PREFIX_SCORER_TOKENIZER)
  message(WARNING "prefix_scorer: building without the native tokenizer (it needs PCRE2 and utf8proc)")
endif()
