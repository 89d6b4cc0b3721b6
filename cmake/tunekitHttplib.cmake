# Finds cpp-httplib and provides the target httplib::httplib, for tunekit::serve. Used by
# tunekit's build and, installed beside tunekitConfig.cmake, by projects that link tunekit::serve.
# Sets TUNEKIT_HTTPLIB_FOUND. In order:
# 1. httplib's own CMake package (an upstream install);
# 2. unless httplib_INCLUDE_DIR is set: pkg-config's cpp-httplib (Debian's libcpp-httplib-dev
#    ships no CMake package: a declarations-only httplib.h, libcpp-httplib.so and the flags it was
#    built with);
# 3. httplib.h in httplib_INCLUDE_DIR (or the system's): upstream's single header, header-only.
if(TARGET httplib::httplib)
  set(TUNEKIT_HTTPLIB_FOUND TRUE)
  return()
endif()
set(TUNEKIT_HTTPLIB_FOUND FALSE)
if(NOT httplib_INCLUDE_DIR)
  find_package(httplib CONFIG QUIET)
  if(TARGET httplib::httplib)
    set(TUNEKIT_HTTPLIB_FOUND TRUE)
    return()
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(TUNEKIT_HTTPLIB_PC QUIET IMPORTED_TARGET cpp-httplib)
    if(TARGET PkgConfig::TUNEKIT_HTTPLIB_PC)
      # Not an ALIAS: tunekit's export names httplib::httplib whichever way it was found.
      add_library(httplib::httplib INTERFACE IMPORTED)
      set_target_properties(httplib::httplib PROPERTIES
        INTERFACE_LINK_LIBRARIES PkgConfig::TUNEKIT_HTTPLIB_PC)
      set(TUNEKIT_HTTPLIB_FOUND TRUE)
      return()
    endif()
  endif()
endif()
find_path(httplib_INCLUDE_DIR httplib.h)
if(httplib_INCLUDE_DIR)
  # Only the single header holds the implementation; a split one needs its library (pkg-config).
  file(STRINGS ${httplib_INCLUDE_DIR}/httplib.h _tunekit_httplib_impl
       REGEX "^inline bool Server::listen_after_bind" LIMIT_COUNT 1)
  if(_tunekit_httplib_impl)
    find_package(Threads REQUIRED)
    add_library(httplib::httplib INTERFACE IMPORTED)
    set_target_properties(httplib::httplib PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${httplib_INCLUDE_DIR}
      INTERFACE_LINK_LIBRARIES Threads::Threads)
    set(TUNEKIT_HTTPLIB_FOUND TRUE)
  endif()
  unset(_tunekit_httplib_impl)
endif()
