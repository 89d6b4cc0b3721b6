# Installs the built tunekit into a scratch prefix, then configures, builds and runs the consumer
# project against it. Arguments: -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=...
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(step
    "install;--install;${BUILD_DIR};--prefix;${WORK_DIR}/prefix"
    "configure;-S;${SOURCE_DIR};-B;${WORK_DIR}/build;-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix;-DCMAKE_BUILD_TYPE=Release"
    "build;--build;${WORK_DIR}/build")
  list(POP_FRONT step name)
  execute_process(COMMAND ${CMAKE_COMMAND} ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer ${name} failed:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${WORK_DIR}/build/consumer WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed (${rc})")
endif()
