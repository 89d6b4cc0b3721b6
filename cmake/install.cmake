# Install rules: the headers, tunekit::core and each backend built, and the CMake package that
# find_package(tunekit [COMPONENTS cuda mpi nccl serve]) reads (cmake/tunekitConfig.cmake.in).
#
# Each backend has its own export file, so that loading the core never names a backend's
# dependencies (MPI::MPI_CXX, CUDA::cudart, NCCL::NCCL, httplib::httplib):
#   tunekitTargets.cmake        tunekit::core
#   tunekit-<name>Targets.cmake tunekit::<name>, for each backend built (cuda, mpi, nccl, serve);
#                               the backend's install(TARGETS) is in tunekit_add_backend.
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

# The components of this install, in the order the config loads them (nccl after cuda).
set(TUNEKIT_COMPONENTS "")
foreach(component cuda mpi nccl serve)
  if(TARGET tunekit_${component})
    list(APPEND TUNEKIT_COMPONENTS ${component})
    install(EXPORT tunekit-${component}Targets NAMESPACE tunekit:: DESTINATION ${TUNEKIT_CMAKE_DIR})
  endif()
endforeach()

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
  # Recreates NCCL::NCCL in the consumer's project (component nccl, see tunekitConfig.cmake).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/tunekitNCCL.cmake DESTINATION ${TUNEKIT_CMAKE_DIR})
endif()
if(TUNEKIT_HAS_SERVE)
  # Recreates httplib::httplib in the consumer's project (component serve, see tunekitConfig.cmake).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/tunekitHttplib.cmake DESTINATION ${TUNEKIT_CMAKE_DIR})
endif()

# The Debian package of this install (cpack in the build directory).
include(${CMAKE_CURRENT_LIST_DIR}/package.cmake)
