// The object that carries the test suite's shared precompiled header (tests/CMakeLists.txt).
