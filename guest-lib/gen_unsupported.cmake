# Generates an entry point for every name in unsupported.list: it prints a
# line naming itself and returns cudaErrorNotSupported.  Run with -DLIST= -DOUT=.
file(STRINGS "${LIST}" names REGEX "^[A-Za-z_][A-Za-z0-9_]*$")
set(body "/* generated from unsupported.list: no CUDA header here, the real prototypes differ */\nint tdm_unsupported(const char *name);\n\n")
foreach(n IN LISTS names)
  string(APPEND body "int ${n}(void);\nint ${n}(void) { return tdm_unsupported(\"${n}\"); }\n")
endforeach()
file(WRITE "${OUT}.tmp" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
