# Writes the bytes of IN as a C array named NAME into the source file OUT:
# cmake -DIN=file -DOUT=file.cc -DNAME=symbol -P embed_image.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," array "${hex}")
file(WRITE "${OUT}"
  "// Generated from ${IN} by embed_image.cmake; do not edit.\n"
  "extern \"C\" {\n"
  "alignas(64) extern const unsigned char ${NAME}[${bytes}] = {\n${array}};\n"
  "}\n")
