# Included by tests/CMakeLists.txt: by every test build, and alone by the ThreadSanitizer one.
# The concurrent filter: single-thread equivalence, checked stress, linearizability. These are
# the tests the ThreadSanitizer stage (make test-tsan) builds and runs.
file(GLOB concurrent_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/concurrent/test_*.cpp)
add_executable(cuckoo_concurrent_tests ${concurrent_sources})
target_link_libraries(cuckoo_concurrent_tests PRIVATE cuckoo::cuckoo cuckoo_project_options
  GTest::gtest_main Threads::Threads)
target_include_directories(cuckoo_concurrent_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
gtest_discover_tests(cuckoo_concurrent_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS concurrent)
cuckoo_compile_in_batches(cuckoo_concurrent_tests)  # tests/CMakeLists.txt

# The checked stress program (a plain main; `make stress-concurrent` runs it for >= 10^8 lookups).
set(CUCKOO_STRESS_LOOKUPS 2000000 CACHE STRING "Lookups of each stress_checked run in ctest")
add_executable(cuckoo_stress_checked concurrent/stress_checked.cpp)
target_link_libraries(cuckoo_stress_checked PRIVATE cuckoo::cuckoo cuckoo_project_options
  Threads::Threads)
# b = 4 at two sizes (the smaller moves each item more often), b = 2 and 8, and f = 27, whose
# entries straddle 64-bit words.
foreach(run "4;12;20000" "4;12;1000" "2;8;20000" "8;16;20000" "4;27;20000")
  list(GET run 0 b)
  list(GET run 1 f)
  list(GET run 2 capacity)
  add_test(NAME stress_checked_b${b}_f${f}_n${capacity}
    COMMAND cuckoo_stress_checked --threads 4 --lookups ${CUCKOO_STRESS_LOOKUPS} --bucket-size ${b}
            --bits ${f} --capacity ${capacity})
  set_tests_properties(stress_checked_b${b}_f${f}_n${capacity} PROPERTIES LABELS concurrent)
endforeach()
# Sole writers taking turns with locked writers (every other block of 64 rounds of each thread
# inside a SoleWriter), for a whole-word table and for f = 27's straddling entries.
foreach(run "4;12;20000" "4;27;20000")
  list(GET run 0 b)
  list(GET run 1 f)
  list(GET run 2 capacity)
  add_test(NAME stress_checked_sole_b${b}_f${f}_n${capacity}
    COMMAND cuckoo_stress_checked --threads 4 --lookups ${CUCKOO_STRESS_LOOKUPS} --bucket-size ${b}
            --bits ${f} --capacity ${capacity} --sole-rounds 64)
  set_tests_properties(stress_checked_sole_b${b}_f${f}_n${capacity} PROPERTIES LABELS concurrent)
endforeach()
# On a CPU with AVX2 the runs above of b = 4, f = 12 take the AVX2-level lookups
# (isa_concurrent_filter.hpp); this one caps the level so that the facade's portable ones are
# stressed too.
add_test(NAME portable.stress_checked_b4_f12_n20000
  COMMAND cuckoo_stress_checked --threads 4 --lookups ${CUCKOO_STRESS_LOOKUPS} --bucket-size 4
          --bits 12 --capacity 20000)
set_tests_properties(portable.stress_checked_b4_f12_n20000 PROPERTIES LABELS concurrent
  ENVIRONMENT CUCKOO_ISA=portable)

# Whole-word buckets (b = 4 with f = 8, 12, 16) have an AVX2 compare (atomic_packed_table.hpp).
# The facade picks it at run time, so the stress runs above already take it on an AVX2 host; the
# gtest binary is built a second time with -mavx2 because the linearizability and unit tests use
# BasicConcurrentFilter directly, whose compare is fixed when it is compiled. That second build
# runs under ThreadSanitizer too.
include(CheckCXXSourceRuns)
set(CMAKE_REQUIRED_FLAGS "-mavx2")
check_cxx_source_runs("int main() { __builtin_cpu_init(); return __builtin_cpu_supports(\"avx2\") ? 0 : 1; }"
  CUCKOO_HOST_RUNS_AVX2)
unset(CMAKE_REQUIRED_FLAGS)
add_custom_target(cuckoo_concurrent_suite DEPENDS cuckoo_concurrent_tests cuckoo_stress_checked)
if(CUCKOO_HOST_RUNS_AVX2)
  add_executable(cuckoo_concurrent_tests_avx2 ${concurrent_sources})
  target_compile_options(cuckoo_concurrent_tests_avx2 PRIVATE -mavx2 -mbmi -mbmi2)
  target_link_libraries(cuckoo_concurrent_tests_avx2 PRIVATE cuckoo::cuckoo cuckoo_project_options
    GTest::gtest_main Threads::Threads)
  target_include_directories(cuckoo_concurrent_tests_avx2 PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  gtest_discover_tests(cuckoo_concurrent_tests_avx2 TEST_PREFIX "avx2." DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS concurrent)
  cuckoo_compile_in_batches(cuckoo_concurrent_tests_avx2)
  add_dependencies(cuckoo_concurrent_suite cuckoo_concurrent_tests_avx2)
endif()
