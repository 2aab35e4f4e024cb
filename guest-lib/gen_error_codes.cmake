# Lists every cudaError_t code of the toolkit's driver_types.h, one
# "<value> <name>" a line, for gen_error_table (which asks the toolkit's own
# libcudart.so.13 for each code's name and description).  The enum's last
# member is written ", cudaErrorApiFailureBase = 10000": a leading comma is
# allowed.  Run with -DHEADER= -DOUT=.
file(STRINGS "${HEADER}" lines REGEX "^[ \t,]*cuda(Success|Error[A-Za-z0-9_]+)[ \t]*=[ \t]*[0-9]+")
set(body "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[ \t,]*(cuda(Success|Error[A-Za-z0-9_]+))[ \t]*=[ \t]*([0-9]+)")
    string(APPEND body "${CMAKE_MATCH_3} ${CMAKE_MATCH_1}\n")
  endif()
endforeach()
if(body STREQUAL "")
  message(FATAL_ERROR "no cudaError_t codes found in ${HEADER}")
endif()
file(WRITE "${OUT}.tmp" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
