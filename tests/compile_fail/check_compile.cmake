# cmake -DCOMPILER=... -DCOMPILER_ID=... -DFLAGS=a|b -DINCLUDES=dir|dir -DSOURCE=snippet.cpp -P
#
# Compiles SOURCE with COMPILER, FLAGS and -I for each of INCLUDES ('|'-separated lists), and holds
# the result to the snippet's `// expect: TEXT` line: `compiles`, it must compile; otherwise it
# must fail, TEXT must be part of its first error line, and (GCC) that must be its only error.
foreach(var COMPILER SOURCE INCLUDES)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_compile.cmake: -D${var}=... is missing")
  endif()
endforeach()

file(STRINGS "${SOURCE}" expect REGEX "^// expect: ")
list(LENGTH expect count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "${SOURCE}: needs exactly one '// expect: ' line, has ${count}")
endif()
string(REGEX REPLACE "^// expect: " "" expect "${expect}")

string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" dirs "${INCLUDES}")
set(args ${flags})
foreach(dir IN LISTS dirs)
  list(APPEND args "-I${dir}")
endforeach()
execute_process(COMMAND ${COMPILER} ${args} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)

# The compiler's first error line ("file:line:col: error: ...", "...: fatal error: ...") and how
# many errors it gave. The output is searched as one string: it holds brackets and semicolons
# that CMake's lists would split or join.
string(REGEX MATCH "[^\n]*: (fatal )?error: [^\n]*" first "${out}")
string(LENGTH "${out}" length)
string(REPLACE ": error: " "" without "${out}")
string(LENGTH "${without}" length_without)
math(EXPR error_count "(${length} - ${length_without}) / 9") # 9: the length of ": error: "

if(expect STREQUAL "compiles")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} must compile (the positive control), but the compiler "
                        "exited ${rc}:\n${out}")
  endif()
  message(STATUS "${SOURCE}: compiles")
  return()
endif()

if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} must not compile, but it does (expected: ${expect})")
endif()
if(first STREQUAL "")
  message(FATAL_ERROR "${SOURCE}: the compiler exited ${rc} without an error line:\n${out}")
endif()
string(FIND "${first}" "${expect}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE}: the first error is not the expected one.\n"
                      "expected: ${expect}\nfirst error: ${first}\n\n${out}")
endif()
if(COMPILER_ID STREQUAL "GNU" AND error_count GREATER 1)
  message(FATAL_ERROR "${SOURCE}: ${error_count} errors where one is expected "
                      "(${expect}):\n${out}")
endif()
message(STATUS "${SOURCE}: fails with: ${first}")
