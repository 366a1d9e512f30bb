#!/bin/sh
# Builds the benchmark as the write-up did (-O2); lab runs it from the experiment folder.
set -eu
CXX=${CXX:-g++}
mkdir -p build
$CXX -O2 -std=c++17 -Wall -Wextra -Werror -o build/heap src/heap.cpp
