#include "io/build_info.hpp"

#include <H5public.h>
// The C interface is enough for the version macros.
#define OMPI_SKIP_MPICXX 1
#include <fftw3.h>
#include <mpi.h>
#include <vtkVersionMacros.h>

#include <toml++/toml.h>
#include <Eigen/Core>
#include <boost/version.hpp>
#include <xsimd/xsimd.hpp>

#include "build_provenance.hpp"
#include "cpm_version.hpp"

namespace cpm {

namespace {

#define CPM_STRINGIFY_VALUE(x) #x
#define CPM_STRINGIFY(x) CPM_STRINGIFY_VALUE(x)

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// The widest vector extension the compiler was allowed to use, and xsimd's choice for
// solvers/simd_math.hpp.
std::string instruction_set() {
#if defined(__AVX512F__)
  std::string level = "AVX-512";
#elif defined(__AVX2__)
  std::string level = "AVX2";
#elif defined(__AVX__)
  std::string level = "AVX";
#elif defined(__SSE4_2__)
  std::string level = "SSE4.2";
#elif defined(__SSE2__)
  std::string level = "SSE2";
#else
  std::string level = "scalar";
#endif
#if defined(__FMA__)
  level += "+FMA";
#endif
  level += std::string(" (xsimd ") + xsimd::default_arch::name() + ", " +
           std::to_string(xsimd::batch<double>::size) + " doubles per register; " +
           (CPM_NATIVE_BUILD ? "-march=native" : "portable x86-64") + ")";
  return level;
}

std::string fftw_library_version() {
  // fftw_version is "fftw-3.3.10-sse2-avx": the number between the first two dashes.
  const std::string text = fftw_version;
  const auto first = text.find('-');
  if (first == std::string::npos) return text;
  const auto second = text.find('-', first + 1);
  return text.substr(first + 1,
                     second == std::string::npos ? std::string::npos : second - first - 1);
}

std::string mpi_library_version() {
#if defined(OMPI_MAJOR_VERSION)
  return "Open MPI " + dotted(OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#else
  return "MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
#endif
}

// The OpenMP specification the compiler implements, from its date code.
std::string openmp_version() {
  const std::string date = CPM_STRINGIFY(_OPENMP);
  for (const auto& [code, version] : {std::pair<const char*, const char*>{"200805", "3.0"},
                                      {"201107", "3.1"},
                                      {"201307", "4.0"},
                                      {"201511", "4.5"},
                                      {"201811", "5.0"},
                                      {"202011", "5.1"},
                                      {"202111", "5.2"}})
    if (date == code) return std::string(version) + " (" + date + ")";
  return date;
}

BuildInfo make_build_info() {
  BuildInfo b;
  b.version = CPM_VERSION;
  b.git_describe = CPM_GIT_DESCRIBE;
  b.compiler = CPM_COMPILER;
  b.build_type = CPM_BUILD_TYPE;
  b.instruction_set = instruction_set();
  unsigned hdf5_major = 0, hdf5_minor = 0, hdf5_release = 0;
  H5get_libversion(&hdf5_major, &hdf5_minor, &hdf5_release);
  const std::string mpi = mpi_library_version();
  const auto space = mpi.rfind(' ');
  b.libraries = {
      {"Eigen", dotted(EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
      {"Boost", dotted(BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100)},
      {"HDF5", dotted(static_cast<int>(hdf5_major), static_cast<int>(hdf5_minor),
                      static_cast<int>(hdf5_release))},
      {"VTK", VTK_VERSION},
      {"FFTW", fftw_library_version()},
      {"toml++", dotted(TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH)},
      {"xsimd", dotted(XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR, XSIMD_VERSION_PATCH)},
      {mpi.substr(0, space), mpi.substr(space + 1)},
      {"OpenMP", openmp_version()},
  };
  return b;
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info = make_build_info();
  return info;
}

std::string library_versions() {
  std::string text;
  for (const auto& [name, version] : build_info().libraries)
    text += (text.empty() ? "" : ", ") + name + " " + version;
  return text;
}

std::string version_text() {
  const BuildInfo& b = build_info();
  return "cpm " + b.version + " (git " + b.git_describe + ")\n" + "built with " + b.compiler +
         ", " + b.build_type + "\n" + "instruction set: " + b.instruction_set + "\n" +
         "libraries: " + library_versions() + "\n";
}

}  // namespace cpm
