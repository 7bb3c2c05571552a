#pragma once
// The real data sets (SST-2, Rotten Tomatoes) are not part of the repository: they are read from
// the folder CMake's CPM_DATA_DIR names. A test that reads one skips, naming the folder, where it
// is absent, as the ParaView test does without ParaView.
#include <gtest/gtest.h>

#include <filesystem>

#define CPM_SKIP_WITHOUT_DATA_SET(name)                                       \
  if (!std::filesystem::exists(std::filesystem::path(CPM_DATA_DIR) / (name))) \
  GTEST_SKIP() << CPM_DATA_DIR                                                \
      "/" name " not found: configure with -DCPM_DATA_DIR=<folder of the data sets>"
