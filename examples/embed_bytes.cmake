# Writes the bytes of IN as a C array NAME into OUT (a header the check
# program includes): the device code it loads is built, never committed.
# TEXT=1 adds the NUL that PTX text loaded from memory ends with.
file(READ ${IN} hex HEX)
if(TEXT)
  string(APPEND hex "00")
endif()
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* generated from ${IN} by examples/embed_bytes.cmake */\n"
  "alignas(8) static const unsigned char ${NAME}[${bytes}] = {\n${body}\n};\n")
