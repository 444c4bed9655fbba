# cuckoo_asan_preload(OUT): the LD_PRELOAD value that lets an uninstrumented host program (Debian's
# python3, redis-server) load a module built with -fsanitize=address: the ASan runtime first, and
# libstdc++ with it (else ASan's __cxa_throw interceptor finds no real __cxa_throw when the module
# throws).
function(cuckoo_asan_preload out)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE cxx_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out} "${asan_runtime} ${cxx_runtime}" PARENT_SCOPE)
endfunction()
