# Installs the build tree, then builds and runs tests/cmake_consumer against the installed files
# twice: through find_package(cuckoo CONFIG) and through pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/cmake_consumer -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)

# pkg-config: the .pc file must carry the include path and the xxHash dependency.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs cuckoo OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot resolve cuckoo")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CXX} ${flags} ${SOURCE_DIR}/tests/cmake_consumer/main.cpp -o ${WORK_DIR}/consumer_pc)
run(${WORK_DIR}/consumer_pc)

# The same program with clang, warnings as errors: users build with either compiler, and GCC
# accepts some things clang does not (clang 14 once refused every insert through the facade).
find_program(CLANGXX clang++)
if(CLANGXX)
  run(${CLANGXX} -std=c++20 -O2 -Wall -Wextra -Werror ${flags}
      ${SOURCE_DIR}/tests/cmake_consumer/main.cpp -o ${WORK_DIR}/consumer_clang)
  run(${WORK_DIR}/consumer_clang)
else()
  message(STATUS "clang++ not found: the clang consumer build is skipped")
endif()
