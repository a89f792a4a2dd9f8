# Included by CMake before llama.cpp's project() (CMAKE_PROJECT_llama.cpp_INCLUDE_BEFORE in
# .cargo/config.toml): builds llama.cpp without its `common` utilities library.
#
# llama-cpp-2 turns llama-cpp-sys-2's `common` feature on and its build script passes
# -DLLAMA_BUILD_COMMON=ON, but Hearth calls nothing in it (the worker uses llama.cpp's own C
# API and llguidance; llama-cpp-2's `common` feature, which would call into it, is off), and
# it was more than half of llama.cpp's build: 220 of 422 CPU-seconds (its argument parser,
# chat parsers, Jinja engine and the HTTP client it downloads models with), measured by timing
# every compiler call of the same CMake build on this project's 2-core machine, 2026-12-06.
# The build script links the library only if its folder exists, and no Rust code references
# the wrapper's llama_rs_* functions, so nothing else changes. (Cargo does not run the build
# script again for a change here: a target folder built before keeps its `common` until cleaned.
# CMAKE_PROJECT_<name>_INCLUDE_BEFORE needs CMake 3.17; Debian 12 has 3.25.)
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "Hearth: llama.cpp's common library is not used" FORCE)
