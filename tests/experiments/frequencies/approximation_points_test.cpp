#include "experiments/frequencies/approximation_points.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/idx_reader.hpp"
#include "io/input_error.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

// The mean of σ²|x − y|²/2 over all ordered pairs of rows.
double mean_half_square(const Eigen::MatrixXd& x, double sigma) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.rows(); ++j) sum += (x.row(i) - x.row(j)).squaredNorm();
  return 0.5 * sigma * sigma * sum / static_cast<double>(x.rows() * x.rows());
}

TEST(ApproximationPoints, GaussianPointsHaveTheScaleInEveryDimension) {
  FeaturesStudyConfig c;
  c.sigma = 2.0;
  c.point_scale = 0.7;
  c.points = 300;
  const ApproximationPoints sets(c);
  for (int d : {2, 16}) {
    const Eigen::MatrixXd x = sets.points(d, false);
    ASSERT_EQ(x.rows(), 300);
    ASSERT_EQ(x.cols(), d);
    EXPECT_NEAR(mean_half_square(x, c.sigma), 0.49, 0.05) << d;
    EXPECT_NE(x, sets.points(d, true).topRows(x.rows()));  // the selection points are others
  }
}

// A small "Fashion-MNIST" of 30 random 4×4 images: the chosen rows are disjoint images,
// projected to d dimensions and scaled exactly.
TEST(ApproximationPoints, ImagesAreProjectedAndScaledExactly) {
  const std::filesystem::path dir = testing_support::fresh_path("approximation_points");
  std::filesystem::create_directories(dir);
  IdxArray images{{30, 4, 4}, std::vector<std::uint8_t>(30 * 16)};
  for (std::size_t i = 0; i < images.data.size(); ++i)
    images.data[i] = static_cast<std::uint8_t>((i * 7919) % 251);
  write_idx((dir / "t10k-images-idx3-ubyte.gz").string(), images);
  FeaturesStudyConfig c;
  c.point_source = "fashion_mnist";
  c.image_directory = dir.string();
  c.points = 12;
  c.selection_points = 10;
  c.point_scale = 1.5;
  const ApproximationPoints sets(c);
  const Eigen::MatrixXd x = sets.points(3, false), y = sets.points(3, true);
  ASSERT_EQ(x.rows(), 12);
  ASSERT_EQ(y.rows(), 10);
  ASSERT_EQ(x.cols(), 3);
  Eigen::MatrixXd both(22, 3);
  both << x, y;
  EXPECT_NEAR(mean_half_square(both, c.sigma), 1.5 * 1.5, 1e-12);
  for (Eigen::Index i = 0; i < 12; ++i)
    for (Eigen::Index j = 0; j < 10; ++j) EXPECT_GT((x.row(i) - y.row(j)).norm(), 1e-9);
  EXPECT_EQ(x, ApproximationPoints(c).points(3, false));  // the seed decides

  c.points = 25;  // 25 + 10 > 30 images
  EXPECT_THROW(ApproximationPoints{c}, InputError);
  c.image_directory = (dir / "missing").string();
  EXPECT_THROW(ApproximationPoints{c}, InputError);
}

}  // namespace
}  // namespace cpm
