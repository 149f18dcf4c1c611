# cmake -DREADME=<README.md> -DSOURCE=<examples/operators.cpp> -P lowbit_readme_snippets.cmake
#
# Checks that every README block introduced by
#   <!-- snippet: NAME -->
#   ```cpp
# holds exactly the lines of SOURCE between `// readme: NAME` and
# `// readme: end` (with the indentation of the marker removed), so the
# README's operator examples are the code the example program runs and checks.
# Fails when a snippet differs, or names a block that SOURCE does not have.

cmake_minimum_required(VERSION 3.21)
file(READ "${README}" readme)
file(READ "${SOURCE}" source)
set(count 0)
set(rest "${readme}")
while(TRUE)
  string(FIND "${rest}" "<!-- snippet: " pos)
  if(pos EQUAL -1)
    break()
  endif()
  string(SUBSTRING "${rest}" ${pos} -1 rest)
  string(REGEX MATCH "^<!-- snippet: ([A-Za-z0-9_]+) -->\n```cpp\n" head "${rest}")
  if(head STREQUAL "")
    message(FATAL_ERROR "README: a snippet marker is not followed by a ```cpp fence")
  endif()
  set(name "${CMAKE_MATCH_1}")
  string(LENGTH "${head}" head_len)
  string(SUBSTRING "${rest}" ${head_len} -1 rest)
  string(FIND "${rest}" "```" close)
  string(SUBSTRING "${rest}" 0 ${close} readme_code)
  string(SUBSTRING "${rest}" ${close} -1 rest)

  string(REGEX MATCH "\n( *)// readme: ${name}\n" marker "${source}")
  if(marker STREQUAL "")
    message(FATAL_ERROR "README snippet '${name}': ${SOURCE} has no `// readme: ${name}` block")
  endif()
  set(indent "${CMAKE_MATCH_1}")
  string(FIND "${source}" "${marker}" start)
  string(LENGTH "${marker}" marker_len)
  math(EXPR start "${start} + ${marker_len}")
  string(SUBSTRING "${source}" ${start} -1 tail)
  string(FIND "${tail}" "${indent}// readme: end" stop)
  string(SUBSTRING "${tail}" 0 ${stop} source_code)
  # (No "^" in the pattern: CMake matches it again wherever a search resumes.)
  string(REGEX REPLACE "\n${indent}" "\n" source_code "\n${source_code}")
  string(SUBSTRING "${source_code}" 1 -1 source_code)

  if(NOT readme_code STREQUAL source_code)
    message(FATAL_ERROR "README snippet '${name}' differs from ${SOURCE}.\nREADME:\n${readme_code}\nsource:\n${source_code}")
  endif()
  math(EXPR count "${count} + 1")
endwhile()
if(count EQUAL 0)
  message(FATAL_ERROR "README: no <!-- snippet: ... --> blocks found")
endif()
message(STATUS "${count} README snippets match ${SOURCE}")
