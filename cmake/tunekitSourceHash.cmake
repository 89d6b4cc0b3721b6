# tunekit_source_hash(<target> <definition> FILES <file>...)
#
# Defines the preprocessor macro <definition> on <target> as the SHA-256 of the listed source
# files, for use as a tuner's `version` (its code identity): when one of the files changes, CMake
# reconfigures, the hash changes and every winner the old code stored becomes a miss.
#
#   tunekit_source_hash(my_app MY_KERNEL_HASH FILES kernels/gemm.cu)
#   ... tunekit::tuner_options{.version = MY_KERNEL_HASH}
function(tunekit_source_hash target definition)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "" "FILES")
  if(NOT ARG_FILES)
    message(FATAL_ERROR "tunekit_source_hash(${target} ${definition}) needs FILES")
  endif()
  set(hashes "")
  foreach(file IN LISTS ARG_FILES)
    get_filename_component(path "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "tunekit_source_hash: ${path} does not exist")
    endif()
    file(SHA256 "${path}" hash)
    string(APPEND hashes "${hash}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  endforeach()
  string(SHA256 digest "${hashes}")
  target_compile_definitions(${target} PRIVATE "${definition}=\"${digest}\"")
endfunction()
