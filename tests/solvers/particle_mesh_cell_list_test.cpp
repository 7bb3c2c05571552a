#include "solvers/particle_mesh_cell_list.hpp"

#include <gtest/gtest.h>

namespace cpm {
namespace {

// Five particles in 2D on a 4 × 3 grid of base cells (stride 4 along axis 1).
struct Sample {
  Eigen::MatrixXd x{5, 2};
  std::vector<MeshStencil> stencils;
  Sample() {
    const int cells[5][2] = {{2, 1}, {0, 0}, {2, 1}, {3, 2}, {0, 0}};
    for (int k = 0; k < 5; ++k) {
      MeshStencil st;
      st.cell = {cells[k][0], cells[k][1], 0};
      st.base = cells[k][0] + 4 * cells[k][1];
      st.t = {0.1 * k, 0.05 * k + 0.2, 0.0};
      stencils.push_back(st);
      x.row(k) << 10.0 + k, 20.0 + k;
    }
  }
};

// Sorted by base cell, and within a cell in particle order (a stable counting sort).
TEST(MeshCellList, SortsByBaseCellKeepingParticleOrderWithinACell) {
  const Sample s;
  MeshCellList list(12, 2);
  list.build(s.x, s.stencils);
  const Eigen::Index expected[5] = {1, 4, 0, 2, 3};  // cells 0, 0, 6, 6, 11
  for (int i = 0; i < 5; ++i) {
    const Eigen::Index k = expected[i];
    EXPECT_EQ(list.particle()[i], k);
    EXPECT_EQ(list.base()[i], s.stencils[k].base);
    EXPECT_EQ(list.cell0()[i], s.stencils[k].cell[0]);
    for (int a = 0; a < 2; ++a) {
      EXPECT_EQ(list.position(a)[i], s.x(k, a));
      EXPECT_EQ(list.fraction(a)[i], s.stencils[k].t[a]);
    }
  }
  const Eigen::Index starts[13] = {0, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 5};
  for (int c = 0; c <= 12; ++c) EXPECT_EQ(list.begin(c), starts[c]) << "cell " << c;
}

// Each cell's corner masses are its particles' CIC weights, summed: they add up to the number of
// particles in the cell.
TEST(MeshCellList, CornerMassesOfACellSumToItsParticleCount) {
  const Sample s;
  MeshCellList list(12, 2);
  list.build(s.x, s.stencils);
  for (int c = 0; c < 12; ++c) {
    double total = 0.0;
    for (int b = 0; b < 4; ++b) total += list.corner_mass()[c * 4 + b];
    EXPECT_NEAR(total, static_cast<double>(list.begin(c + 1) - list.begin(c)), 1e-15);
  }
  // Cell 6 holds particles 0 (t = 0, 0.2) and 2 (t = 0.2, 0.3); corner 3 is t_0 t_1.
  EXPECT_NEAR(list.corner_mass()[6 * 4 + 3], 0.0 * 0.2 + 0.2 * 0.3, 1e-15);
}

// A smaller second build reuses the storage and forgets the first.
TEST(MeshCellList, RebuildWithFewerParticles) {
  const Sample s;
  MeshCellList list(12, 2);
  list.build(s.x, s.stencils);
  Eigen::MatrixXd x = s.x.topRows(2);
  std::vector<MeshStencil> stencils(s.stencils.begin(), s.stencils.begin() + 2);
  list.build(x, stencils);
  EXPECT_EQ(list.size(), 2);
  EXPECT_EQ(list.begin(12), 2);
  EXPECT_EQ(list.particle()[0], 1);
  EXPECT_EQ(list.particle()[1], 0);
}

}  // namespace
}  // namespace cpm
