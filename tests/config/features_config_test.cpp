#include "config/features_config.hpp"

#include <gtest/gtest.h>

#include "io/input_error.hpp"

namespace cpm {
namespace {

FeaturesStudyConfig parse(const std::string& text) {
  return parse_features_config(text, "f.toml");
}

TEST(FeaturesConfig, ReadsEverySection) {
  const FeaturesStudyConfig c = parse(
      "[study]\nmethods = [\"iid\", \"coulomb\"]\ndims = [3, 16]\nn = [32, 4096]\nseeds = 5\n"
      "seed = 4\nsigma = 0.5\n[points]\nsource = \"fashion_mnist\"\ndirectory = \"/data\"\ncount = "
      "100\nselection_count = 50\nscale = 2.0\n"
      "[coulomb]\ns = [-1.0, 0.0, 1.0]\nnewtonian = true\nlambda = 2.0\nbeta = 10.0\n"
      "tolerance = 1e-5\nmax_iterations = 50\nsteps = 30\nstep = 0.02\n"
      "[output]\ndirectory = \"x\"\n");
  ASSERT_EQ(c.methods.size(), 2u);
  EXPECT_EQ(c.methods[1], FeatureMethod::coulomb);
  EXPECT_EQ(c.dims, (std::vector<int>{3, 16}));
  EXPECT_EQ(c.ns, (std::vector<Eigen::Index>{32, 4096}));
  EXPECT_EQ(c.seeds, 5);
  EXPECT_EQ(c.seed, 4u);
  EXPECT_EQ(c.sigma, 0.5);
  EXPECT_EQ(c.point_source, "fashion_mnist");
  EXPECT_EQ(c.image_directory, "/data");
  EXPECT_EQ(c.points, 100);
  EXPECT_EQ(c.selection_points, 50);
  EXPECT_EQ(c.point_scale, 2.0);
  EXPECT_EQ(c.repulsion.lambda, 2.0);
  EXPECT_EQ(c.repulsion.beta, 10.0);
  EXPECT_EQ(c.repulsion.tolerance, 1e-5);
  EXPECT_EQ(c.repulsion.max_iterations, 50);
  EXPECT_EQ(c.repulsion.steps, 30);
  EXPECT_EQ(c.repulsion.step, 0.02);
  EXPECT_EQ(c.output_directory, "x");
}

TEST(FeaturesConfig, CoulombCandidatesKeepExponentsBelowDAndAddNewtonsOnce) {
  FeaturesStudyConfig c;
  c.exponents = {-1.0, 0.0, 1.0};
  c.newtonian = true;
  using K = InteractionKernel::Kind;
  const auto in1 = coulomb_candidates(c, 1);  // s = 1 dropped; d − 2 = −1 already there
  ASSERT_EQ(in1.size(), 2u);
  EXPECT_EQ(in1[0].kind, K::linear);
  EXPECT_EQ(in1[1].kind, K::log);
  EXPECT_EQ(coulomb_candidates(c, 2).size(), 3u);  // d − 2 = 0 (log) already there
  const auto in5 = coulomb_candidates(c, 5);
  ASSERT_EQ(in5.size(), 4u);
  EXPECT_EQ(in5[3].kind, K::power);
  EXPECT_EQ(in5[3].s, 3.0);
}

TEST(FeaturesConfig, RejectsBadInputNamingTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"[study]\nmethod = [\"iid\"]\n", "study.method: unknown key"},
      {"[study]\nmethods = [\"random\"]\n", "study.methods: unknown method 'random'"},
      {"[study]\nmethods = []\n", "study.methods: needs at least one method"},
      {"[study]\ndims = [0]\n", "study.dims: must hold whole numbers from 1 to 1024"},
      {"[study]\ndims = [2.5]\n", "study.dims: must hold whole numbers"},
      {"[study]\nn = [0]\n", "study.n: must hold whole numbers from 1"},
      {"[study]\nn = [100000]\n", "study.n: must hold whole numbers from 1 to 16384"},
      {"[points]\ncount = 5000\n", "points.count: must be at most 4096"},
      {"[study]\nseeds = 0\n", "study.seeds: must be at least 1"},
      {"[study]\nsigma = -1.0\n", "study.sigma: must be positive"},
      {"[points]\ncount = \"many\"\n", "points.count: expected an integer"},
      {"[points]\nsource = \"cifar\"\n", "points.source: unknown value 'cifar'"},
      {"[points]\ndirectory = \"/data\"\n", "points.directory: unknown key"},
      {"[coulomb]\ns = [-2.0]\n", "coulomb.s: must hold exponents above -2"},
      {"[coulomb]\ns = []\n", "coulomb.s: needs at least one exponent"},
      {"[coulomb]\nbeta = 0.0\n", "coulomb.beta: must be positive"},
      {"[coulomb]\nlambda = 0.0\n", "coulomb.lambda: must be positive"},
      {"[output]\ndirectory = \"\"\n", "output.directory: must not be empty"},
      {"[extra]\nx = 1\n", "extra: unknown key"}};
  for (const auto& [text, message] : cases) {
    try {
      parse(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what() << " (expected: " << message << ")";
    }
  }
}

TEST(FeaturesConfig, ReadsTheLaplaceKernelAndItsExponents) {
  const FeaturesStudyConfig c = parse(
      "[study]\nkernel = \"laplace\"\nmethods = [\"iid\", \"coulomb\"]\ndims = [1, 3]\n"
      "[coulomb]\nnewtonian = true\n");
  EXPECT_EQ(c.law, SpectralLaw::laplace);
  EXPECT_EQ(parse("[study]\n").law, SpectralLaw::gaussian);
  // The energy distance (s = −1, the Gaussian's default) does not exist for the Cauchy law, nor
  // does the Newtonian s = d − 2 in 1D.
  EXPECT_EQ(c.exponents, std::vector<double>{-0.5});
  EXPECT_EQ(coulomb_candidates(c, 1).size(), 1u);
  EXPECT_EQ(coulomb_candidates(c, 3).size(), 2u);
  try {
    parse("[study]\nkernel = \"laplace\"\n[coulomb]\ns = [-1]\n");
    ADD_FAILURE() << "s = -1 accepted for the Laplace kernel";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("coulomb.s: must hold exponents above -1 for the laplace"),
              std::string::npos)
        << e.what();
  }
}

// The configuration of `cpm concentration`.
TEST(FeaturesConfig, ReadsAKernelConcentrationStudy) {
  const std::string text =
      "[features]\ndim = 3\nsigma = 0.5\nseed = 2\n[points]\ncount = 40\n"
      "[coulomb]\ns = 0.5\nlambda = 2.0\nsteps = 100\nstep = 0.02\n"
      "[ldp]\nns = [8, 16]\nreplicas = 30\nbetas = [1.0]\nbetas_per_particle = [0.5]\n"
      "deltas = [0.1, 0.2]\n[output]\ndirectory = \"k\"\n";
  const KernelConcentrationConfig c = parse_kernel_concentration_config(text, "k.toml");
  EXPECT_EQ(c.features.dims, std::vector<int>{3});
  EXPECT_EQ(c.features.sigma, 0.5);
  EXPECT_EQ(c.features.seed, 2u);
  EXPECT_EQ(c.features.points, 40);
  EXPECT_EQ(c.features.repulsion.kernel.describe(), InteractionKernel::power(0.5).describe());
  EXPECT_EQ(c.features.repulsion.lambda, 2.0);
  EXPECT_EQ(c.features.repulsion.steps, 100);
  EXPECT_EQ(c.ns, (std::vector<Eigen::Index>{8, 16}));
  EXPECT_EQ(c.replicas, 30);
  EXPECT_EQ(c.betas, std::vector<double>{1.0});
  EXPECT_EQ(c.betas_per_particle, std::vector<double>{0.5});
  EXPECT_EQ(c.deltas, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(c.features.output_directory, "k");
  EXPECT_EQ(c.methods.size(), 2u);
}

TEST(FeaturesConfig, KernelConcentrationRejectsBadInputNamingTheKey) {
  const std::string ldp = "[ldp]\nns = [8]\nbetas = [1.0]\ndeltas = [0.1]\n";
  const std::pair<std::string, std::string> cases[] = {
      {"[features]\nmethods = [\"sobol\"]\n" + ldp, "features.methods: unknown method 'sobol'"},
      {"[features]\ndim = 2\n[coulomb]\ns = 2.0\n" + ldp, "coulomb.s"},
      {"[features]\n[ldp]\nns = [8]\ndeltas = [0.1]\n", "ldp.betas"},
      {"[features]\n[ldp]\nns = [1]\nbetas = [1.0]\ndeltas = [0.1]\n", "ldp.ns"},
      {"[features]\n[ldp]\nns = [8]\nbetas = [1.0]\ndeltas = [0.2, 0.1]\n", "ldp.deltas"},
      {"[features]\ncolour = 1\n" + ldp, "features.colour"},
      {"[features]\n[ldp]\nns = [8, 16]\nreplicas = 1000000000\nbetas = [1.0]\ndeltas = [0.1]\n",
       "ldp.replicas"},
      {"[features]\n" + ldp + "[extra]\n", "extra"}};
  for (const auto& [text, key] : cases) {
    try {
      parse_kernel_concentration_config(text, "k.toml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace cpm
