# Finds the torch that PrefixScorer builds on: the libtorch inside a pip-installed torch package, located through
# CMAKE_PREFIX_PATH or, failing that, by asking the Python interpreter (the project's .venv by default). Stops with
# a message that says what is missing and how to get it: a torch older than the minimum, a CPU-only torch with
# CUDA forced on, no nvcc, or an nvcc whose CUDA major differs from torch's.
#
# Sets PREFIX_SCORER_TORCH_VERSION (torch.__version__), PREFIX_SCORER_TORCH_CUDA (torch.version.cuda, or empty),
# PREFIX_SCORER_WITH_CUDA (ON when the project's CUDA code is compiled) and PREFIX_SCORER_CUDA_ARCHITECTURES.

set(PREFIX_SCORER_MIN_TORCH 2.5)  # scaled_dot_product_attention with enable_gqa
set(PREFIX_SCORER_TORCH_HINT "pip install torch==2.11.0 (a CUDA 13 build on Linux)")

if(NOT Python_EXECUTABLE AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(Python_EXECUTABLE "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "The Python that owns torch")
endif()

# torch's CMake package is share/cmake/Torch inside the torch package.
find_file(PREFIX_SCORER_TORCH_CONFIG Torch/TorchConfig.cmake)
if(NOT PREFIX_SCORER_TORCH_CONFIG AND Python_EXECUTABLE)
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE torch_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(torch_cmake_dir)
    list(APPEND CMAKE_PREFIX_PATH "${torch_cmake_dir}")
    set(CMAKE_PREFIX_PATH "${CMAKE_PREFIX_PATH}" CACHE STRING "Where torch's (and pybind11's) CMake packages are" FORCE)
    find_file(PREFIX_SCORER_TORCH_CONFIG Torch/TorchConfig.cmake)
  endif()
endif()
if(NOT PREFIX_SCORER_TORCH_CONFIG)
  message(FATAL_ERROR "torch not found. Install it (${PREFIX_SCORER_TORCH_HINT}) and pass "
    "-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)'), "
    "or -DPython_EXECUTABLE=<the python that has torch>.")
endif()

# torch/version.py carries the full version and the CUDA it was built with; a bare libtorch has neither.
get_filename_component(torch_package_dir "${PREFIX_SCORER_TORCH_CONFIG}/../../../.." ABSOLUTE)
set(PREFIX_SCORER_TORCH_CUDA "")
if(EXISTS "${torch_package_dir}/version.py")
  file(STRINGS "${torch_package_dir}/version.py" torch_version_line REGEX "^__version__ *=")
  string(REGEX REPLACE ".*['\"](.*)['\"].*" "\\1" PREFIX_SCORER_TORCH_VERSION "${torch_version_line}")
  file(STRINGS "${torch_package_dir}/version.py" torch_cuda_line REGEX "^cuda.*=")
  if(torch_cuda_line MATCHES "['\"]([0-9.]+)['\"]")
    set(PREFIX_SCORER_TORCH_CUDA "${CMAKE_MATCH_1}")
  endif()
elseif(EXISTS "${torch_package_dir}/lib/libtorch_cuda.so")
  set(PREFIX_SCORER_TORCH_CUDA "unknown")
endif()

set(PREFIX_SCORER_CUDA AUTO CACHE STRING "Compile the CUDA code: AUTO (when torch is a CUDA build), ON or OFF")
set_property(CACHE PREFIX_SCORER_CUDA PROPERTY STRINGS AUTO ON OFF)
if(PREFIX_SCORER_CUDA STREQUAL "ON" AND NOT PREFIX_SCORER_TORCH_CUDA)
  message(FATAL_ERROR "PREFIX_SCORER_CUDA=ON, but the torch at ${torch_package_dir} is a CPU-only build. "
    "Install a CUDA build (${PREFIX_SCORER_TORCH_HINT}) or configure with -DPREFIX_SCORER_CUDA=AUTO.")
endif()

# A CUDA torch enables CUDA itself: nvcc must be there, of torch's CUDA major. The architectures are read first,
# because torch's CMake overrides CMAKE_CUDA_ARCHITECTURES.
if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "OFF")
  set(default_architectures "${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(default_architectures 80 90)
  set(CMAKE_CUDA_ARCHITECTURES ${default_architectures})
endif()
set(PREFIX_SCORER_CUDA_ARCHITECTURES "${default_architectures}" CACHE STRING "CUDA architectures compiled for")
if(PREFIX_SCORER_TORCH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "torch ${PREFIX_SCORER_TORCH_VERSION} is a CUDA ${PREFIX_SCORER_TORCH_CUDA} build and needs "
      "nvcc, which was not found. Install the CUDA Toolkit ${PREFIX_SCORER_TORCH_CUDA} (or "
      "pip install nvidia-cuda-nvcc) and put nvcc on PATH or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
  endif()
  string(REGEX MATCH "^[0-9]+" torch_cuda_major "${PREFIX_SCORER_TORCH_CUDA}")
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --version OUTPUT_VARIABLE nvcc_version_text)
  string(REGEX MATCH "release ([0-9]+)\\.([0-9]+)" nvcc_release "${nvcc_version_text}")
  if(torch_cuda_major AND NOT CMAKE_MATCH_1 STREQUAL torch_cuda_major)
    message(FATAL_ERROR "nvcc at ${CMAKE_CUDA_COMPILER} is CUDA ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}, but torch "
      "${PREFIX_SCORER_TORCH_VERSION} is built with CUDA ${PREFIX_SCORER_TORCH_CUDA}: install nvcc of CUDA "
      "${torch_cuda_major} (pip install nvidia-cuda-nvcc) and pass -DCMAKE_CUDA_COMPILER.")
  endif()
  string(REPLACE ";" " " arch_list "${PREFIX_SCORER_CUDA_ARCHITECTURES}")
  string(REGEX REPLACE "([0-9])([0-9])" "\\1.\\2" arch_list "${arch_list}")
  string(REPLACE " " ";" arch_list "${arch_list}")
  set(TORCH_CUDA_ARCH_LIST "${arch_list}" CACHE STRING "torch's spelling of the architectures")
endif()

find_package(Torch REQUIRED)
include(TorchWheelLibraries)
if(NOT PREFIX_SCORER_TORCH_VERSION)
  set(PREFIX_SCORER_TORCH_VERSION "${Torch_VERSION}")
endif()
if(Torch_VERSION VERSION_LESS PREFIX_SCORER_MIN_TORCH)
  message(FATAL_ERROR "torch ${Torch_VERSION} at ${torch_package_dir} is too old: PrefixScorer needs torch >= "
    "${PREFIX_SCORER_MIN_TORCH} (${PREFIX_SCORER_TORCH_HINT}).")
endif()
# Newer torch (2.15) needs C++20 and says so on its target, which CMake honours for C++ sources and, as the dialect
# CUDA20, for CUDA ones: CMake before 3.26 knows no nvcc flag for that dialect, so it is named here (nvcc 12 and newer
# take -std=c++20). Older torch builds as C++17.
get_target_property(torch_features torch INTERFACE_COMPILE_FEATURES)
if(torch_features MATCHES "cxx_std_20")
  set(CMAKE_CXX_STANDARD 20)
  set(CMAKE_CUDA_STANDARD 20)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endif()
# torch's CMake turns CMAKE_CUDA_ARCHITECTURES off; targets made from here on take the project's list.
set(CMAKE_CUDA_ARCHITECTURES ${PREFIX_SCORER_CUDA_ARCHITECTURES})

if(PREFIX_SCORER_TORCH_CUDA AND NOT PREFIX_SCORER_CUDA STREQUAL "OFF")
  set(PREFIX_SCORER_WITH_CUDA ON)
else()
  set(PREFIX_SCORER_WITH_CUDA OFF)
endif()
message(STATUS "prefix_scorer: torch ${PREFIX_SCORER_TORCH_VERSION} from ${torch_package_dir}; "
  "CUDA code: ${PREFIX_SCORER_WITH_CUDA} (architectures ${PREFIX_SCORER_CUDA_ARCHITECTURES})")
