# Generates the table of cudaError_t names from the toolkit's driver_types.h,
# so every code the toolkit knows has its name.  Run with -DHEADER= -DOUT=.
file(STRINGS "${HEADER}" lines REGEX "^[ \t]*cudaError[A-Za-z0-9_]+[ \t]*=[ \t]*[0-9]+")
set(body "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[ \t]*(cudaError[A-Za-z0-9_]+)[ \t]*=[ \t]*([0-9]+)")
    string(APPEND body "    { ${CMAKE_MATCH_2}, \"${CMAKE_MATCH_1}\" },\n")
  endif()
endforeach()
file(WRITE "${OUT}.tmp" "/* generated from driver_types.h */\n#include \"error_names.h\"\nconst tdm_error_name tdm_error_names[] = {\n${body}};\nconst unsigned tdm_error_name_count = sizeof(tdm_error_names) / sizeof(tdm_error_names[0]);\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
