# cmake -DCXX=<compiler> -DCOMPILER_ID=<GNU|Clang> -DSOURCE_DIR=<repo> -DOUT_DIR=<dir> -P check_unity_names.cmake
# The unity build (MEMPLAN_UNITY) compiles 16 files as one, and which files share a batch changes
# whenever a file is added (and differs in the web build, which batches the core and the command
# line together). So every file-local name must be unique across all of them: this compiles every
# source file, then every test file, as one translation unit (-fsyntax-only, -Wshadow -Werror) and
# fails on any redefinition, ambiguity or shadowing, whatever the batches are today.
cmake_policy(VERSION 3.20)
set(flags -std=c++17 -fsyntax-only -Wall -Wextra -Wshadow -Werror -DFMT_HEADER_ONLY=1 -DMEMPLAN_HAVE_NET=1
  -I${SOURCE_DIR}/include -I${SOURCE_DIR}/src)
if(COMPILER_ID STREQUAL "GNU")
  list(APPEND flags -Wno-subobject-linkage)
endif()
file(GLOB_RECURSE sources ${SOURCE_DIR}/src/core/*.cpp ${SOURCE_DIR}/src/probe/*.cpp ${SOURCE_DIR}/src/exec/*.cpp
  ${SOURCE_DIR}/src/cli/*.cpp ${SOURCE_DIR}/src/net/*.cpp)
file(GLOB tests ${SOURCE_DIR}/tests/unit/*.cpp ${SOURCE_DIR}/tests/cli/*.cpp)
# test_estimate_values.cpp replaces the global operator new and stays out of the batches.
list(FILTER tests EXCLUDE REGEX "/test_estimate_values\\.cpp$")
set(test_flags -I${SOURCE_DIR}/tests/unit -I${SOURCE_DIR}/tests/cli -include catch2/catch.hpp)
foreach(d MEMPLAN_TEST_DATA_DIR MEMPLAN_SOURCE_DIR MEMPLAN_BINARY MEMPLAN_FAKE_NVML MEMPLAN_FAKE_NVML_BROKEN
    MEMPLAN_FAKE_NVML_OLD)
  list(APPEND test_flags "-D${d}=\"\"")
endforeach()
file(MAKE_DIRECTORY ${OUT_DIR})
foreach(part sources tests)
  list(SORT ${part})
  set(text "")
  foreach(f IN LISTS ${part})
    string(APPEND text "#include \"${f}\"\n")
  endforeach()
  file(WRITE ${OUT_DIR}/all_${part}.cpp "${text}")
  set(extra "")
  if(part STREQUAL "tests")
    set(extra ${test_flags})
  endif()
  execute_process(COMMAND ${CXX} ${flags} ${extra} ${OUT_DIR}/all_${part}.cpp RESULT_VARIABLE rc
    ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${part} do not compile as one translation unit: a file-local name "
      "is defined twice or shadows another file's (rename one; see CMakeLists.txt, MEMPLAN_UNITY):\n${err}")
  endif()
endforeach()
