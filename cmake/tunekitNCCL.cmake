# Finds NCCL's header and library (NVIDIA and Debian ship no CMake package for it) and wraps them
# in the imported target NCCL::NCCL. Used by tunekit's build and, installed beside
# tunekitConfig.cmake, by projects that link tunekit::nccl. Hints: NCCL_ROOT (CMake or environment
# variable), the CUDA toolkit's directories, then the system's. Sets TUNEKIT_NCCL_FOUND.
if(TARGET NCCL::NCCL)
  set(TUNEKIT_NCCL_FOUND TRUE)
  return()
endif()
find_package(CUDAToolkit QUIET)
set(_tunekit_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME})
find_path(TUNEKIT_NCCL_INCLUDE_DIR nccl.h
  HINTS ${_tunekit_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(TUNEKIT_NCCL_LIBRARY NAMES nccl libnccl.so.2
  HINTS ${_tunekit_nccl_hints} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
unset(_tunekit_nccl_hints)
if(TUNEKIT_NCCL_INCLUDE_DIR AND TUNEKIT_NCCL_LIBRARY)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES
    IMPORTED_LOCATION ${TUNEKIT_NCCL_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${TUNEKIT_NCCL_INCLUDE_DIR})
  set(TUNEKIT_NCCL_FOUND TRUE)
else()
  set(TUNEKIT_NCCL_FOUND FALSE)
endif()
