include(CMakePackageConfigHelpers)

set(TUNEKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tunekit)

install(TARGETS tunekit_core EXPORT tunekitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tunekit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/tunekit/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunekit)
install(EXPORT tunekitTargets NAMESPACE tunekit:: DESTINATION ${TUNEKIT_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tunekitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tunekitConfig.cmake
                              INSTALL_DESTINATION ${TUNEKIT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tunekitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tunekitConfig.cmake
              ${PROJECT_BINARY_DIR}/tunekitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/tunekitSourceHash.cmake
        DESTINATION ${TUNEKIT_CMAKE_DIR})
if(TUNEKIT_HAS_NCCL)
  # Recreates NCCL::NCCL in the consumer's project (see tunekitConfig.cmake).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/tunekitNCCL.cmake DESTINATION ${TUNEKIT_CMAKE_DIR})
endif()
if(TUNEKIT_HAS_SERVE)
  # Recreates httplib::httplib in the consumer's project (see tunekitConfig.cmake).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/tunekitHttplib.cmake DESTINATION ${TUNEKIT_CMAKE_DIR})
endif()
