# example-reference NAME: prints the line examples/NAME.cu prints, computed on
# the host by plain sequential code (independent of the sim kernels), for the
# end-to-end tests to compare against.
add_executable(example-reference ${CMAKE_CURRENT_LIST_DIR}/example_reference.c)
