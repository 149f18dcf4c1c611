# cmake -DNM=<nm> -DOBJECTS=<obj>|<obj>|... -P lowbit_dispatch_check.cmake
#
# Checks the objects of lowbit_add_dispatch (docs/dispatch.md, "ODR").
# lowbit's own functions in an architecture's object live in its
# arch_<name> namespace and cannot be confused with anyone else's. The other
# inline functions it defines (standard library and xsimd code such as
# std::vector<float>::_M_default_append) may also be defined by other
# objects, and the linker keeps the first definition it sees. The objects
# are linked lowest architecture first, so the kept copy is always from the
# lowest object that defines the function, whose instruction set every
# higher architecture's CPU has. This script checks that order and reports
# the shared functions.
#
# OBJECTS: the objects in link order, '|'-separated, as $<TARGET_OBJECTS>
# lists them; the architecture of each is read from its name
# (lowbit_dispatch_<arch>.cpp.o), and the registry's is skipped.

cmake_minimum_required(VERSION 3.21)
foreach(var NM OBJECTS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lowbit_dispatch_check: ${var} not set")
  endif()
endforeach()
string(REPLACE "|" ";" objects "${OBJECTS}")

# The weak (inline) function symbols of `obj` that are not lowbit's own.
function(foreign_weak obj arch out)
  execute_process(COMMAND "${NM}" --defined-only "${obj}"
    OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lowbit_dispatch_check: ${NM} failed on ${obj}: ${err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${text}")
  set(syms "")
  string(LENGTH "arch_${arch}" n)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *W (.+)$")
      set(sym "${CMAKE_MATCH_1}")
      # lowbit's own: the inline namespace appears mangled as <len>arch_<name>.
      if(NOT sym MATCHES "${n}arch_${arch}")
        list(APPEND syms "${sym}")
      endif()
    endif()
  endforeach()
  set(${out} "${syms}" PARENT_SCOPE)
endfunction()

# The known architectures, lowest first (LOWBIT_DISPATCH_ARCHS).
set(known sse2 sse4_1 sse4_2 avx avx2 avx512f avx512bw)

set(seen "")
set(last_rank -1)
set(failed "")
set(shared 0)
set(all_syms "")
foreach(obj IN LISTS objects)
  get_filename_component(name "${obj}" NAME)
  if(NOT name MATCHES "^lowbit_dispatch_([a-z0-9_]+)\\.cpp\\.(o|obj)$" OR CMAKE_MATCH_1 STREQUAL "registry")
    continue()
  endif()
  set(arch "${CMAKE_MATCH_1}")
  list(FIND known "${arch}" rank)
  if(rank LESS 0)
    list(APPEND failed "unknown architecture ${arch} (${obj})")
    continue()
  endif()
  if(NOT rank GREATER last_rank)
    list(APPEND failed "${arch} is linked after a higher or equal architecture (${seen})")
  endif()
  set(last_rank ${rank})
  list(APPEND seen "${arch}")
  foreign_weak("${obj}" "${arch}" syms)
  foreach(sym IN LISTS syms)
    if(sym IN_LIST all_syms)
      math(EXPR shared "${shared} + 1")
    endif()
  endforeach()
  list(APPEND all_syms ${syms})
endforeach()

if(NOT seen)
  message(FATAL_ERROR "lowbit_dispatch_check: no lowbit_dispatch_<arch> object among ${OBJECTS}")
endif()
if(failed)
  list(JOIN failed "\n  " msg)
  message(FATAL_ERROR "lowbit_dispatch_check: the objects are not linked lowest architecture first, "
    "so the linker could keep a higher architecture's copy of a shared inline function for code that "
    "runs on a lower one:\n  ${msg}")
endif()
list(JOIN seen " " order)
message(STATUS "lowbit_dispatch_check: objects in order ${order}; ${shared} non-lowbit inline "
  "functions defined by more than one of them resolve to the lowest copy")
