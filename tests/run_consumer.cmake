# Builds and runs a consumer project of tunekit, as a user's project would take it:
#   -DMODE=find_package     installs the built tunekit (BUILD_DIR) into a scratch prefix first
#   -DMODE=add_subdirectory  adds tunekit's sources (TUNEKIT_SOURCE_DIR) with CLI11 hidden
# Other arguments: -DSOURCE_DIR=<consumer project> -DWORK_DIR=<scratch directory>
file(REMOVE_RECURSE "${WORK_DIR}")
set(configure "configure;-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-DCMAKE_BUILD_TYPE=Release")
# Each step is a list: its name, then the arguments of `cmake`.
if(MODE STREQUAL "find_package")
  set(step_1 "install;--install;${BUILD_DIR};--prefix;${WORK_DIR}/prefix")
  set(step_2 "${configure};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
  set(step_3 "build;--build;${WORK_DIR}/build")
elseif(MODE STREQUAL "add_subdirectory")
  set(step_1 "${configure};-DTUNEKIT_SOURCE_DIR=${TUNEKIT_SOURCE_DIR}")
  list(APPEND step_1 "-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=TRUE")
  set(step_2 "build;--build;${WORK_DIR}/build;--target;consumer")
else()
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory, not '${MODE}'")
endif()
foreach(var step_1 step_2 step_3)
  if(NOT DEFINED ${var})
    continue()
  endif()
  set(step ${${var}})
  list(POP_FRONT step name)
  execute_process(COMMAND ${CMAKE_COMMAND} ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MODE} consumer: ${name} failed:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${WORK_DIR}/build/consumer WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MODE} consumer failed (${rc})")
endif()
