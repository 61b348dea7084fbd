# `cmake --install` and `pip install .`: the library, its headers, a package config (so that C++ eval code can
# find_package(prefix_scorer) and link prefix_scorer::prefix_scorer), the benchmark and, in a wheel, the Python
# package. Installed binaries find torch's libraries relative to themselves (a wheel lies beside torch in
# site-packages) and at the torch they were built against.
include(CMakePackageConfigHelpers)

set(torch_lib_dir "${TORCH_INSTALL_PREFIX}/lib")
if(SKBUILD)
  # From the scripts folder to site-packages, as this interpreter lays them out.
  execute_process(COMMAND "${Python_EXECUTABLE}" -c
    "import sysconfig; print(sysconfig.get_path('scripts')); print(sysconfig.get_path('platlib'))"
    OUTPUT_VARIABLE python_paths OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" python_paths "${python_paths}")
  list(GET python_paths 0 scripts_dir)
  list(GET python_paths 1 platlib_dir)
  file(RELATIVE_PATH scripts_to_platlib "${scripts_dir}" "${platlib_dir}")
  set(library_rpath "$ORIGIN/../../torch/lib;${torch_lib_dir}")
  set(bench_rpath "$ORIGIN/${scripts_to_platlib}/prefix_scorer/lib;$ORIGIN/${scripts_to_platlib}/torch/lib;${torch_lib_dir}")
else()
  set(library_rpath "${torch_lib_dir}")
  set(bench_rpath "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${torch_lib_dir}")
endif()

set_target_properties(prefix_scorer PROPERTIES INSTALL_RPATH "${library_rpath}")
install(TARGETS prefix_scorer EXPORT prefix_scorerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/prefix_scorer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT prefix_scorerTargets NAMESPACE prefix_scorer:: DESTINATION ${PREFIX_SCORER_CMAKE_DIR})
configure_package_config_file(cmake/prefix_scorerConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfig.cmake
  INSTALL_DESTINATION ${PREFIX_SCORER_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfigVersion.cmake
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/TorchWheelLibraries.cmake
  DESTINATION ${PREFIX_SCORER_CMAKE_DIR})

if(TARGET prefix-scorer-bench)
  set_target_properties(prefix-scorer-bench PROPERTIES INSTALL_RPATH "${bench_rpath}")
  install(TARGETS prefix-scorer-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

if(SKBUILD AND TARGET _core)
  set(package_dir "${SKBUILD_PLATLIB_DIR}/prefix_scorer")
  set_target_properties(_core PROPERTIES INSTALL_RPATH "$ORIGIN/lib;$ORIGIN/../torch/lib;${torch_lib_dir}")
  install(TARGETS _core LIBRARY DESTINATION "${package_dir}")
  if(TARGET _testing)
    set_target_properties(_testing PROPERTIES INSTALL_RPATH "$ORIGIN/lib;$ORIGIN/../torch/lib;${torch_lib_dir}")
    install(TARGETS _testing LIBRARY DESTINATION "${package_dir}")
  endif()
  install(DIRECTORY "${CMAKE_BINARY_DIR}/python/prefix_scorer/" DESTINATION "${package_dir}"
    FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
endif()
