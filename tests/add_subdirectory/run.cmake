# Configures the add_subdirectory consumer against tunekit's source tree with CLI11 hidden, builds
# it and runs it. Arguments: -DTUNEKIT_SOURCE_DIR=... -DSOURCE_DIR=... -DWORK_DIR=...
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(step
    "configure;-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-DTUNEKIT_SOURCE_DIR=${TUNEKIT_SOURCE_DIR};-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=TRUE;-DCMAKE_BUILD_TYPE=Release"
    "build;--build;${WORK_DIR}/build;--target;consumer")
  list(POP_FRONT step name)
  execute_process(COMMAND ${CMAKE_COMMAND} ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "add_subdirectory consumer: ${name} failed:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${WORK_DIR}/build/consumer WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "add_subdirectory consumer failed (${rc})")
endif()
