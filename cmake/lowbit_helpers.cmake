# Helpers for lowbit's own targets (tests, benchmarks, examples).
#
# Nothing here is ever applied to the INTERFACE target `lowbit`: consumers
# choose their own -m, floating-point and warning flags.

include_guard(GLOBAL)

# lowbit_private_flags(<target> [SANITIZE] [BASELINE])
#
# Gives <target> the project's build flags:
#   * warnings -Wall -Wextra -Wpedantic (plus -Werror with LOWBIT_WERROR),
#   * -ffp-contract=off, so that a*b+c is never fused behind the tests' back,
#   * -march=${LOWBIT_TEST_ARCH} when that cache variable is not empty
#     (empty = the compiler's baseline, SSE2 on x86-64) and BASELINE is not
#     given (BASELINE: always the baseline, for runtime dispatch),
#   * with SANITIZE: -fsanitize=${LOWBIT_SANITIZE} on compile and link, when
#     LOWBIT_SANITIZE is not empty.
function(lowbit_private_flags target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "SANITIZE;BASELINE" "" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lowbit_private_flags: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()

  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive- /fp:precise)
    if(LOWBIT_WERROR)
      target_compile_options(${target} PRIVATE /WX)
    endif()
    return()
  endif()

  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -ffp-contract=off)
  if(LOWBIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(NOT LOWBIT_TEST_ARCH STREQUAL "" AND NOT arg_BASELINE)
    target_compile_options(${target} PRIVATE "-march=${LOWBIT_TEST_ARCH}")
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      # GCC 12's AVX-512 intrinsics (_mm512_undefined_ps() & co. in
      # avx512fintrin.h) trip -Wmaybe-uninitialized by the thousand once
      # inlined (GCC bug 105593, fixed in GCC 13).
      target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    endif()
  endif()
  if(arg_SANITIZE AND NOT LOWBIT_SANITIZE STREQUAL "")
    set(_san "-fsanitize=${LOWBIT_SANITIZE}" -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_compile_options(${target} PRIVATE ${_san})
    target_link_options(${target} PRIVATE ${_san})
  endif()
endfunction()

# lowbit_optimize(<target>)
#
# Forces -O3 on <target> whatever the build type (used for the exhaustive
# sweeps, which are too slow unoptimised).
function(lowbit_optimize target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /O2)
  else()
    target_compile_options(${target} PRIVATE -O3)
  endif()
endfunction()
