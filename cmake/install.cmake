# `cmake --install`: the library, its public headers and a CMake package, so that another project
# finds it with find_package(flashattn) and links flashattn::flashattn (tests/install checks it).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FLASHATTN_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flashattn)
install(TARGETS flashattn EXPORT flashattnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flashattn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT flashattnTargets NAMESPACE flashattn:: DESTINATION ${FLASHATTN_CMAKE_PACKAGE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flashattnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/flashattnConfig.cmake INSTALL_DESTINATION ${FLASHATTN_CMAKE_PACKAGE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flashattnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flashattnConfig.cmake ${PROJECT_BINARY_DIR}/flashattnConfigVersion.cmake
  DESTINATION ${FLASHATTN_CMAKE_PACKAGE_DIR})
