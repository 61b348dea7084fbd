# `cmake --install` puts the library, its headers and a package config in place, so that C++ eval code can
# find_package(prefix_scorer) and link prefix_scorer::prefix_scorer.
include(CMakePackageConfigHelpers)

install(TARGETS prefix_scorer EXPORT prefix_scorerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/prefix_scorer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT prefix_scorerTargets NAMESPACE prefix_scorer::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prefix_scorer)

configure_package_config_file(cmake/prefix_scorerConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prefix_scorer)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/prefix_scorerConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prefix_scorer)
