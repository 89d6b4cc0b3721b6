# Builds and runs a consumer project of tunekit, as a user's project would take it. MODE:
#   install           installs the built tunekit (BUILD_DIR) into PREFIX, and checks that the
#                     core's export file names no dependency of a component (the fixture of the
#                     find_package tests)
#   find_package      configures the consumer (SOURCE_DIR) against the install in PREFIX, builds
#                     it and runs it
#   deb               builds the Debian package of BUILD_DIR with cpack (CPACK_COMMAND), checks
#                     its control fields (dpkg-deb -f), extracts it (dpkg-deb -x, no root needed)
#                     and runs two find_package consumers against the extracted /usr: one asking
#                     for no component with every component's dependencies hidden, one asking for
#                     every component of the build (COMPONENTS)
#   add_subdirectory  adds tunekit's sources (TUNEKIT_SOURCE_DIR) with CLI11 hidden
# Other arguments: -DSOURCE_DIR=<consumer project> -DWORK_DIR=<scratch directory>
#                  -DJOBS=<jobs building the add_subdirectory consumer> (default: logical cores)
# find_package and deb (lists are comma-separated: add_test splits arguments on semicolons):
#   COMPONENTS=<c,...>           asked for with find_package's COMPONENTS, and linked
#   OPTIONAL_COMPONENTS=<c,...>  asked for with OPTIONAL_COMPONENTS, linked where found
#   HIDE=<package,...>           hidden from the consumer's configure: CMAKE_DISABLE_FIND_PACKAGE_
#                                <package> (tunekit's config honours it for NCCL and httplib too)
#   EXPECT_FAILURE=<text>        the configure must fail, naming <text>; nothing is built
#   EXPECT_OUTPUT=<text,...>     the configure must succeed, naming each <text>
# deb: DEB_DEPENDS, DEB_SUGGESTS: packages the Depends and Suggests fields must name;
#      DEB_NOT_DEPENDS: a regular expression Depends must not match; VERSION: the package version.

# The policies of the CMake that tunekit needs (a script run with -P has none set: if(IN_LIST)).
cmake_minimum_required(VERSION 3.25)

# Every package this build can use beside the core's (hidden for the consumers of the core alone).
set(component_packages CUDAToolkit MPI NCCL httplib)
# The file names (or -l flags) of the libraries of the components and of their dependencies: the
# link command of a consumer of the core alone names none of them.
string(CONCAT component_libraries "tunekit_(cuda|mpi|nccl|serve)|cudart(_static)?|cuda|nvrtc"
              "|mpi(_cxx)?|nccl|cpp-httplib")

file(REMOVE_RECURSE "${WORK_DIR}")
if(NOT JOBS)
  cmake_host_system_information(RESULT JOBS QUERY NUMBER_OF_LOGICAL_CORES)
endif()
foreach(var COMPONENTS OPTIONAL_COMPONENTS HIDE EXPECT_OUTPUT DEB_DEPENDS DEB_SUGGESTS)
  string(REPLACE "," ";" ${var} "${${var}}")
endforeach()

# Runs `cmake <args>` as step <name>; fails the test unless it succeeds. Sets <name>_out.
function(run_cmake name)
  execute_process(COMMAND ${CMAKE_COMMAND} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MODE} consumer: ${name} failed:\n${out}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
endfunction()

# Fails unless <text>, whitespace collapsed as CMake wraps its messages, contains <what>.
function(expect_text text what context)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${text}")
  string(REGEX REPLACE "[ \t\r\n]+" " " what_flat "${what}")
  string(FIND "${flat}" "${what_flat}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${context} does not say '${what}':\n${text}")
  endif()
endfunction()

# The export files of the install in <prefix>: the core's (tunekitTargets*.cmake) may name no
# component's dependency, and each component asked for has its own.
function(check_exports prefix)
  file(GLOB_RECURSE core_exports "${prefix}/tunekitTargets*.cmake")
  if(NOT core_exports)
    message(FATAL_ERROR "no tunekitTargets.cmake under ${prefix}")
  endif()
  foreach(file IN LISTS core_exports)
    file(READ "${file}" text)
    if(text MATCHES "(CUDA|MPI|NCCL|httplib|PkgConfig)::[A-Za-z_]+|tunekit::(cuda|mpi|nccl|serve)")
      message(FATAL_ERROR "${file}, the core's export, names ${CMAKE_MATCH_0}")
    endif()
  endforeach()
  foreach(component IN LISTS COMPONENTS)
    file(GLOB_RECURSE exports "${prefix}/tunekit-${component}Targets.cmake")
    if(NOT exports)
      message(FATAL_ERROR "no tunekit-${component}Targets.cmake under ${prefix}")
    endif()
  endforeach()
  message(STATUS "${prefix}: the core's export names no component's dependency")
endfunction()

# Fails when the link command of the consumer in <dir> names a library of a component or of a
# component's dependencies (component_libraries): a consumer of the core alone links none.
function(check_core_link dir)
  # Where the Makefile and Ninja generators keep the link command.
  file(GLOB link_files "${dir}/build/CMakeFiles/consumer.dir/link.txt" "${dir}/build/build.ninja")
  if(NOT link_files)
    message(FATAL_ERROR "no link command of the consumer in ${dir}/build (link.txt, build.ninja)")
  endif()
  foreach(file IN LISTS link_files)
    file(READ "${file}" text)
    separate_arguments(words UNIX_COMMAND "${text}")
    foreach(word IN LISTS words)
      get_filename_component(name "${word}" NAME)
      if(name MATCHES "^(-l|lib)(${component_libraries})([._]|$)")
        message(FATAL_ERROR "the consumer of the core alone links ${word} (${file})")
      endif()
    endforeach()
  endforeach()
  message(STATUS "the consumer links no library of a component")
endfunction()

# Configures the find_package consumer against <prefix> in <dir> asking for <components> (a list)
# with <hide> (a list) hidden; then, unless EXPECT_FAILURE, checks that it links each component
# asked for (the core alone: no component's library), builds it and runs it.
function(find_package_consumer prefix dir components hide)
  # The consumer takes its lists with their semicolons escaped (one -D argument each). The
  # configure runs here, not through run_cmake: a function's ARGN would split them again.
  string(REPLACE ";" "\\;" components_arg "${components}")
  string(REPLACE ";" "\\;" optional_arg "${OPTIONAL_COMPONENTS}")
  set(args -S ${SOURCE_DIR} -B ${dir}/build -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_PREFIX_PATH=${prefix} "-DCONSUMER_COMPONENTS=${components_arg}"
           "-DCONSUMER_OPTIONAL_COMPONENTS=${optional_arg}")
  foreach(package IN LISTS hide)
    list(APPEND args -DCMAKE_DISABLE_FIND_PACKAGE_${package}=TRUE)
  endforeach()
  set(what "components [${components}] optional [${OPTIONAL_COMPONENTS}], hidden [${hide}]")
  message(STATUS "find_package consumer in ${dir}: ${what}")
  execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(EXPECT_FAILURE)
    if(rc EQUAL 0)
      message(FATAL_ERROR "configure of the consumer (${what}) succeeded; expected it to fail "
                          "with '${EXPECT_FAILURE}':\n${out}")
    endif()
    expect_text("${out}" "${EXPECT_FAILURE}" "the failed configure (${what})")
    message(STATUS "configure failed as expected: ${EXPECT_FAILURE}")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure of the consumer (${what}) failed:\n${out}")
  endif()
  # The package found is the one under test, not another tunekit on the machine.
  expect_text("${out}" "in ${prefix}/" "the configure (${what})")
  foreach(text IN LISTS EXPECT_OUTPUT)
    expect_text("${out}" "${text}" "the configure (${what})")
    message(STATUS "configure said: ${text}")
  endforeach()
  foreach(component IN LISTS components)
    expect_text("${out}" "consumer: links tunekit::${component}" "the configure (${what})")
  endforeach()
  run_cmake(build --build ${dir}/build --parallel ${JOBS})
  if(NOT components AND NOT OPTIONAL_COMPONENTS)
    check_core_link(${dir})
  endif()
  execute_process(COMMAND ${dir}/build/consumer WORKING_DIRECTORY ${dir}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${what}) failed (${rc})")
  endif()
endfunction()

if(MODE STREQUAL "install")
  # cmake --install builds nothing: every target it installs must be built (cmake --build).
  run_cmake(install --install ${BUILD_DIR} --prefix ${PREFIX})
  check_exports(${PREFIX})
elseif(MODE STREQUAL "find_package")
  find_package_consumer(${PREFIX} ${WORK_DIR} "${COMPONENTS}" "${HIDE}")
elseif(MODE STREQUAL "deb")
  set(packages ${WORK_DIR}/packages)
  execute_process(COMMAND ${CPACK_COMMAND} --config ${BUILD_DIR}/CPackConfig.cmake -G DEB
                          -B ${packages}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cpack failed:\n${out}")
  endif()
  execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE arch
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(deb ${packages}/tunekit-dev_${VERSION}_${arch}.deb)
  if(NOT EXISTS ${deb})
    file(GLOB debs ${packages}/*.deb)
    message(FATAL_ERROR "cpack wrote no ${deb} (it wrote: ${debs}):\n${out}")
  endif()
  message(STATUS "cpack wrote ${deb}")
  foreach(field Package Version Architecture Depends Suggests Section Maintainer Description)
    execute_process(COMMAND dpkg-deb -f ${deb} ${field} RESULT_VARIABLE rc OUTPUT_VARIABLE value
                    ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "dpkg-deb -f ${deb} ${field} failed: ${err}")
    endif()
    set(field_${field} "${value}")
    message(STATUS "  ${field}: ${value}")
  endforeach()
  foreach(check "Package;tunekit-dev" "Version;${VERSION}" "Architecture;${arch}")
    list(GET check 0 field)
    list(GET check 1 expected)
    if(NOT field_${field} STREQUAL expected)
      message(FATAL_ERROR "${deb}: ${field} is '${field_${field}}', not '${expected}'")
    endif()
  endforeach()
  # Depends and Suggests are lists of package names, each with an optional version and
  # alternatives: "a (>= 1), b | c".
  foreach(field Depends Suggests)
    string(REGEX REPLACE "\\([^)]*\\)" "" names "${field_${field}}")
    string(REGEX REPLACE "[,|]" ";" names "${names}")
    list(TRANSFORM names STRIP)
    string(TOUPPER ${field} upper)
    foreach(package IN LISTS DEB_${upper})
      if(NOT package IN_LIST names)
        message(FATAL_ERROR "${deb}: ${field} (${field_${field}}) does not name ${package}")
      endif()
    endforeach()
  endforeach()
  if(DEB_NOT_DEPENDS AND field_Depends MATCHES "${DEB_NOT_DEPENDS}")
    message(FATAL_ERROR "${deb}: Depends (${field_Depends}) names ${CMAKE_MATCH_0}, which only a "
                        "component needs (Suggests)")
  endif()
  set(root ${WORK_DIR}/root)
  execute_process(COMMAND dpkg-deb -x ${deb} ${root} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -x ${deb} failed: ${err}")
  endif()
  check_exports(${root}/usr)
  find_package_consumer(${root}/usr ${WORK_DIR}/core "" "${component_packages}")
  if(COMPONENTS)
    find_package_consumer(${root}/usr ${WORK_DIR}/components "${COMPONENTS}" "")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  set(configure "-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-DCMAKE_BUILD_TYPE=Release")
  run_cmake(configure ${configure} -DTUNEKIT_SOURCE_DIR=${TUNEKIT_SOURCE_DIR}
            -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=TRUE)
  run_cmake(build --build ${WORK_DIR}/build --target consumer --parallel ${JOBS})
  execute_process(COMMAND ${WORK_DIR}/build/consumer WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MODE} consumer failed (${rc})")
  endif()
else()
  message(FATAL_ERROR "MODE must be install, find_package, deb or add_subdirectory, not '${MODE}'")
endif()
