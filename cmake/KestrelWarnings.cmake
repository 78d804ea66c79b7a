# Warnings every Kestrel target compiles with.
# -Wno-missing-field-initializers: brace-initialising an aggregate such as
# ChatMessage{"user", text} leaves the other members to their default member
# initialisers, which is what they are for; GCC 12 flags every such line
# (80 of the build's 85 warnings), so the real ones drowned.
add_library(kestrel_warnings INTERFACE)
target_compile_options(kestrel_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter -Wno-missing-field-initializers>)
