# tunekit_add_backend(<name> SOURCES <src>... [PUBLIC_DEPS <dep>...] [PRIVATE_DEPS <dep>...])
#
# Declares the library of one optional backend the way every backend is declared: the target
# tunekit_<name> (output libtunekit_<name>), its alias tunekit::<name> (the name consumers use,
# also after find_package), position-independent code, tunekit's warnings for its own sources, and
# its place in the install export set when tunekit installs: an export set of its own,
# tunekit-<name>Targets (cmake/install.cmake installs it as the package's component <name>).
# tunekit::core is always a public dependency.
function(tunekit_add_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tunekit_add_backend(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "tunekit_add_backend(${name}): no SOURCES")
  endif()
  set(target tunekit_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(tunekit::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target}
                                             POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target}
    PUBLIC tunekit::core ${arg_PUBLIC_DEPS}
    PRIVATE $<BUILD_INTERFACE:tunekit_warnings> ${arg_PRIVATE_DEPS})
  if(TUNEKIT_INSTALL)
    install(TARGETS ${target} EXPORT tunekit-${name}Targets
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()
