#!/usr/bin/env bash
# Installs what building and testing libdlconv needs on Debian, when it is missing.
#   scripts/deps.sh        build + plain tests (meson, ninja, cmocka)
#   scripts/deps.sh test   also what the other stages of scripts/test.sh need: cmake (install
#                          stage), clang with its sanitizer and libFuzzer runtimes
#                          (libclang-rt-14-dev), valgrind (gcc's own ASan/UBSan/TSan runtimes
#                          come with gcc)
# Optional peers (oneDNN and XNNPACK for the benchmark's side-by-side columns) with DLCONV_PEERS=1.
set -eu
pkgs=""
command -v cc >/dev/null 2>&1 || pkgs="$pkgs gcc libc6-dev"
command -v meson >/dev/null 2>&1 || pkgs="$pkgs meson"
command -v ninja >/dev/null 2>&1 || pkgs="$pkgs ninja-build"
command -v pkg-config >/dev/null 2>&1 || pkgs="$pkgs pkg-config"
[ -e /usr/include/cmocka.h ] || pkgs="$pkgs libcmocka-dev"
if [ "${1:-}" = test ]; then
  command -v cmake >/dev/null 2>&1 || pkgs="$pkgs cmake"
  command -v clang >/dev/null 2>&1 || pkgs="$pkgs clang"
  # the libFuzzer runtime of whichever clang is (or will be) installed
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-"$(uname -m)".a >/dev/null 2>&1 ||
    pkgs="$pkgs libclang-rt-14-dev"
  command -v valgrind >/dev/null 2>&1 || pkgs="$pkgs valgrind"
fi
if [ "${DLCONV_PEERS:-0}" = 1 ] && [ ! -e /usr/include/dnnl.h ]; then pkgs="$pkgs libdnnl-dev"; fi
if [ "${DLCONV_PEERS:-0}" = 1 ] && [ ! -e /usr/include/xnnpack.h ]; then pkgs="$pkgs libxnnpack-dev"; fi
if [ "${DLCONV_PEERS:-0}" = 1 ] && [ ! -e /usr/include/pthreadpool.h ]; then pkgs="$pkgs libpthreadpool-dev"; fi
if [ -n "$pkgs" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq $pkgs
fi
