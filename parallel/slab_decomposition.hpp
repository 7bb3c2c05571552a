#pragma once
// One system over P MPI ranks: the box and its grid cut into slabs along one coordinate (the
// mesh's and the grid's last axis), in FFTW's MPI layout (docs/distributed.md §1): the n₀ grid
// planes go in blocks of ⌈n₀/P⌉ to ranks 0, 1, …, so the last ranks may own fewer planes or none.
// A particle belongs to the rank whose planes hold that coordinate (cell-centred planes of width
// h = (upper − lower)/n₀; coordinates outside the box go to the first or the last rank with
// planes).
namespace cpm {

class SlabDecomposition {
 public:
  // Throws std::invalid_argument unless lower < upper, planes ≥ 1 and ranks ≥ 1.
  SlabDecomposition(double lower, double upper, long planes, int ranks);

  int ranks() const { return ranks_; }
  long planes() const { return planes_; }
  // The planes [first_plane, first_plane + plane_count) of a rank.
  long first_plane(int rank) const;
  long plane_count(int rank) const;
  // The slab's coordinate range [lower, upper) along the cut coordinate.
  double lower(int rank) const;
  double upper(int rank) const;
  // The rank owning cut coordinate x0.
  int owner(double x0) const;

 private:
  double lower_, width_;  // width_: of one plane
  long planes_, block_;
  int ranks_;
};

}  // namespace cpm
