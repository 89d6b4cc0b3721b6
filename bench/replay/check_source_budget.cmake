# Runs tunekit_replay with transfer between SPACE and a copy whose every third config is 10 ms
# slower (one kernel on two GPUs that rank it differently): once
# with sources that know the whole other file, once with sources from a search of the other file
# whose budget covers its whole space, and once from a search of 8 evaluations. The first two must
# give the same fractions of optimum (an exhaustive search measures what the file holds, and its
# distinct best are the file's); the third records its source budget.
#   cmake -DREPLAY=path/to/tunekit_replay -DSPACE=file.json -P check_source_budget.cmake
cmake_minimum_required(VERSION 3.20)
file(READ ${SPACE} text)
file(WRITE gpu_a.json "${text}")
string(JSON text SET "${text}" device_name "\"another GPU\"")
string(JSON count LENGTH "${text}" cache)
math(EXPR last "${count} - 1")
foreach(i RANGE 0 ${last} 3)
  string(JSON name MEMBER "${text}" cache ${i})
  string(JSON time ERROR_VARIABLE not_a_time GET "${text}" cache ${name} time)
  if(NOT not_a_time AND time MATCHES "^[0-9]")
    string(JSON text SET "${text}" cache ${name} time "1${time}")
  endif()
endforeach()
file(WRITE gpu_b.json "${text}")
foreach(run whole exhaustive small)
  set(extra)
  if(run STREQUAL "exhaustive")
    set(extra --source-budget 100000)
  elseif(run STREQUAL "small")
    set(extra --source-budget 8)
  endif()
  execute_process(COMMAND ${REPLAY} --strategy hybrid --seeds 3 --budgets 10,25 --no-score
                          --transfer 3 ${extra} --json ${run}.json gpu_a.json gpu_b.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tunekit_replay ${extra} failed (${rc}): ${err}")
  endif()
  file(READ ${run}.json ${run})
endforeach()
foreach(i 0 1)
  foreach(budget 10 25)
    string(JSON a GET "${whole}" results ${i} fraction ${budget})
    string(JSON b GET "${exhaustive}" results ${i} fraction ${budget})
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "file ${i} at ${budget}: fraction ${a} with whole-file sources, ${b} "
                          "with sources from an exhaustive search")
    endif()
  endforeach()
endforeach()
string(JSON budget GET "${small}" source_budget)
string(JSON rows LENGTH "${small}" results)
if(NOT budget EQUAL 8 OR NOT rows EQUAL 2)
  message(FATAL_ERROR "--source-budget 8: source_budget ${budget}, ${rows} rows")
endif()
message(STATUS "exhaustive sources give the whole file's fractions; source budget recorded")
