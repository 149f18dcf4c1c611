# lowbit_extract_readme_example(<readme> <output.cpp> <found-var>)
#
# Copies the ```cpp fenced block that lies between the lines
#   <!-- readme-example:begin -->
#   <!-- readme-example:end -->
# of <readme> into <output.cpp> (rewritten only when the code changed, with a
# #line directive so that compiler messages point into the README), and sets
# <found-var> to TRUE. When the file or the markers are missing, it says so and
# sets <found-var> to FALSE. <readme> becomes a configure dependency, so an
# edit re-extracts the example.

include_guard(GLOBAL)

function(lowbit_extract_readme_example readme output found_var)
  set(${found_var} FALSE PARENT_SCOPE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${readme}")
  if(NOT EXISTS "${readme}")
    message(STATUS "lowbit: ${readme} not found, readme_example test skipped")
    return()
  endif()

  file(READ "${readme}" text)
  set(begin_marker "<!-- readme-example:begin -->")
  set(end_marker "<!-- readme-example:end -->")
  string(FIND "${text}" "${begin_marker}" begin_pos)
  string(FIND "${text}" "${end_marker}" end_pos)
  if(begin_pos EQUAL -1 OR end_pos EQUAL -1 OR end_pos LESS begin_pos)
    message(STATUS "lowbit: README.md has no ${begin_marker} ... ${end_marker} block, readme_example test skipped")
    return()
  endif()

  string(LENGTH "${begin_marker}" marker_len)
  math(EXPR block_start "${begin_pos} + ${marker_len}")
  math(EXPR block_len "${end_pos} - ${block_start}")
  string(SUBSTRING "${text}" ${block_start} ${block_len} block)

  # The opening fence: ```cpp (or ```c++) at the start of a line.
  string(REGEX MATCH "(^|\n)```[ \t]*(cpp|c\\+\\+|C\\+\\+)[^\n]*\n" fence "${block}")
  if(fence STREQUAL "")
    message(FATAL_ERROR "lowbit: the readme-example block of ${readme} has no ```cpp fence")
  endif()
  string(FIND "${block}" "${fence}" fence_pos)
  string(LENGTH "${fence}" fence_len)
  math(EXPR code_start "${fence_pos} + ${fence_len}")
  string(SUBSTRING "${block}" ${code_start} -1 rest)
  # The closing fence: ``` at the start of a line.
  string(FIND "${rest}" "\n```" close_pos)
  if(rest MATCHES "^```")
    set(close_pos 0)
  elseif(close_pos EQUAL -1)
    message(FATAL_ERROR "lowbit: the ```cpp block in the readme-example block of ${readme} is not closed")
  else()
    math(EXPR close_pos "${close_pos} + 1")
  endif()
  string(SUBSTRING "${rest}" 0 ${close_pos} code)

  # README line on which the code starts, for #line.
  math(EXPR code_abs "${block_start} + ${code_start}")
  string(SUBSTRING "${text}" 0 ${code_abs} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines line)
  math(EXPR line "${line} + 1")

  set(content "// Generated from ${readme} by CMake: edit the README, not this file.\n#line ${line} \"${readme}\"\n${code}")
  set(tmp "${output}.tmp")
  file(WRITE "${tmp}" "${content}")
  file(COPY_FILE "${tmp}" "${output}" ONLY_IF_DIFFERENT)
  file(REMOVE "${tmp}")
  message(STATUS "lowbit: README example extracted to ${output}")
  set(${found_var} TRUE PARENT_SCOPE)
endfunction()
