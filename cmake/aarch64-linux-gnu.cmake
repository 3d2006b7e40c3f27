# Cross-compiling xprobe for arm64 (AArch64 Linux) with Debian's cross toolchain
# (gcc-12-aarch64-linux-gnu, g++-12-aarch64-linux-gnu) and the arm64 libraries installed
# through multiarch (libelf-dev:arm64, libdw-dev:arm64, libfmt-dev:arm64, libgtest-dev:arm64;
# ./run installs them). Use: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake ...
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc-12)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++-12)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc-12)

# Headers and libraries come from the arm64 side of multiarch (/usr/lib/aarch64-linux-gnu,
# /usr/include/aarch64-linux-gnu) and the architecture-independent /usr/include and
# /usr/share (CLI11's headers and CMake files); programs (python3, the host's tools) from the
# host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
