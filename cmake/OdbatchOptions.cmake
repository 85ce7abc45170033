option(ODBATCH_WERROR "Treat compiler warnings as errors" OFF)
option(ODBATCH_BUILD_TESTS "Build the test suite" ON)
option(ODBATCH_BUILD_BENCH "Build the benchmarks in bench/" ON)
set(ODBATCH_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined or thread")
set(ODBATCH_WITH_CUDA "AUTO" CACHE STRING "Build CUDA/NCCL parts: ON, OFF or AUTO (on where nvcc exists)")
set_property(CACHE ODBATCH_WITH_CUDA PROPERTY STRINGS ON OFF AUTO)
option(ODBATCH_CCACHE "Compile through ccache where it is installed" ON)
option(ODBATCH_MOLD "Link with mold where the compiler accepts it" ON)

# Faster builds that build the same thing. ccache keeps its cache outside the clone
# (~/.cache/ccache), so fresh clones and every build dir of this machine share it; paths under
# the source tree are hashed relative to it, so a clone elsewhere hits too.
find_program(ODBATCH_CCACHE_PROGRAM ccache)
if(ODBATCH_CCACHE AND ODBATCH_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
    ${ODBATCH_CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_C_COMPILER_LAUNCHER})
endif()
# mold links a test suite several times faster than GNU ld, and a build links ~190 programs. (lld
# 14 is no choice: programs it links from GCC 12's objects abort unwinding some exceptions.)
if(ODBATCH_MOLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=mold ODBATCH_HAVE_MOLD)
  if(ODBATCH_HAVE_MOLD)
    add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=mold>)
  endif()
endif()

# Applied to every odbatch target (never to imported ones).
add_library(odbatch_warnings INTERFACE)
target_compile_options(odbatch_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion)
if(ODBATCH_WERROR)
  target_compile_options(odbatch_warnings INTERFACE -Werror)
endif()

if(ODBATCH_SANITIZE)
  add_compile_options(-fsanitize=${ODBATCH_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ODBATCH_SANITIZE})
endif()
