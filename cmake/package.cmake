# The Debian package of tunekit's install: `cpack` in the build directory writes
# tunekit-dev_<version>_<arch>.deb (everything `cmake --install` installs, under /usr: headers,
# static libraries, the CMake package, and the tunekit command where it is built).
#
# Depends: what the core needs where it is linked (nlohmann-json3-dev, libssl-dev, and
# zlib1g-dev where the build found zlib). Suggests: what each component this build has needs
# when a project asks for it (find_package(tunekit COMPONENTS ...)); apt does not install them.
# Included by cmake/install.cmake; tests/CMakeLists.txt's deb_package test builds the package,
# checks its control fields and builds consumers against it.
if(NOT PROJECT_IS_TOP_LEVEL)
  return() # a parent project's CPack configuration is its own
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tunekit-dev)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR tunekit)
set(TUNEKIT_PACKAGE_CONTACT "tunekit developers" CACHE STRING
    "The Maintainer field of tunekit's Debian package")
set(CPACK_PACKAGE_CONTACT "${TUNEKIT_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "autotuning of GPU kernels and host functions for C++ (development files)")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "tunekit picks the fastest configuration of a GPU kernel or host function for the inputs "
       "at hand, remembers it on disk and serves it on every later call. This package has its "
       "headers, static libraries and CMake package: "
       "find_package(tunekit [COMPONENTS cuda mpi nccl serve]).")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # tunekit-dev_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The dependencies are named below, not computed: dpkg-shlibdeps would map the CUDA runtime that
# the tunekit command links (a CUDA build) to no Debian package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)

# nlohmann_json 3.10 is what the config asks for; OpenSSL 3's libcrypto.so.3 is what the
# installed tunekit command runs with.
set(tunekit_deb_depends "nlohmann-json3-dev (>= 3.10)" "libssl-dev (>= 3)")
if(TUNEKIT_HAS_ZLIB)
  list(APPEND tunekit_deb_depends zlib1g-dev)
endif()
# Per component: cuda, NVIDIA's toolkit (Debian's or NVIDIA's own packages); mpi, the Open MPI
# that tunekit::mpi was compiled against; nccl, NVIDIA's NCCL; serve, cpp-httplib.
set(tunekit_deb_suggests "")
if(TARGET tunekit_cuda)
  list(APPEND tunekit_deb_suggests "nvidia-cuda-toolkit | cuda-toolkit")
endif()
if(TARGET tunekit_mpi)
  list(APPEND tunekit_deb_suggests libopenmpi-dev)
endif()
if(TARGET tunekit_nccl)
  list(APPEND tunekit_deb_suggests libnccl-dev)
endif()
if(TARGET tunekit_serve)
  list(APPEND tunekit_deb_suggests libcpp-httplib-dev)
endif()
list(JOIN tunekit_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
list(JOIN tunekit_deb_suggests ", " CPACK_DEBIAN_PACKAGE_SUGGESTS)

# `make package_source`: the source tree as a .tar.gz, without Git's files and build trees.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/\\\\.autotune_logs/" "__pycache__")

include(CPack)
