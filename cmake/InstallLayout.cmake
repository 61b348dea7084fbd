# Where the installed files go. A wheel built by `pip install .` (scikit-build-core sets SKBUILD) keeps the shared
# library, the headers and the CMake package inside the Python package prefix_scorer/, and puts prefix-scorer-bench
# in the environment's scripts folder (bin/ of a venv); `cmake --install` uses the GNU layout under its prefix.
if(SKBUILD)
  set(CMAKE_INSTALL_LIBDIR prefix_scorer/lib)
  set(CMAKE_INSTALL_INCLUDEDIR prefix_scorer/include)
  set(CMAKE_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
  set(PREFIX_SCORER_CMAKE_DIR prefix_scorer/share/cmake/prefix_scorer)
endif()
include(GNUInstallDirs)
if(NOT SKBUILD)
  set(PREFIX_SCORER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/prefix_scorer)
endif()
