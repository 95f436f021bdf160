#!/usr/bin/env bash
# Install stage of scripts/test.sh: installs the plain build (BUILD_DIR, default build) into a
# staging directory (meson install --destdir, as a package build does) and builds the installed
# example (share/libdlconv/examples/conv) against it as the README says, twice:
#   pkg-config   PKG_CONFIG_PATH at the staged .pc, linked with an rpath to the staged libdir
#   CMake        find_package(dlconv) through CMAKE_PREFIX_PATH, run with LD_LIBRARY_PATH
# and runs both. Nothing is written outside a temporary directory.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
# the project's default; a build directory set up before it was one gets it here
meson configure "$build" -Dpkgconfig.relocatable=true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
meson install -C "$build" --destdir "$stage" --quiet
prefix=$stage$(meson introspect "$build" --buildoptions | python3 -c \
  'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
pc=$(find "$stage" -name dlconv.pc | head -n 1)
[ -n "$pc" ] || { echo "test_install: no dlconv.pc installed" >&2; exit 1; }
example=$prefix/share/libdlconv/examples/conv
[ -f "$example/conv.c" ] || { echo "test_install: the example is not installed under $example" >&2; exit 1; }

echo "== pkg-config ($pc)"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir dlconv)
case $libdir in "$stage"/*) ;; *) echo "test_install: the .pc's libdir $libdir is not in the staging directory" >&2; exit 1 ;; esac
# shellcheck disable=SC2046
cc -O2 "$example/conv.c" -o "$tmp/conv_pc" $(pkg-config --cflags --libs dlconv) -lm -Wl,-rpath,"$libdir"
"$tmp/conv_pc"

echo "== CMake (find_package(dlconv) under $prefix)"
if command -v cmake >/dev/null 2>&1; then
  cmake -S "$example" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log" >&2; exit 1; }
  cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; exit 1; }
  LD_LIBRARY_PATH=$libdir "$tmp/cmake/conv"
else
  echo "test_install: cmake is missing (scripts/deps.sh test installs it)" >&2
  exit 1
fi
echo "== install: ok"
