#pragma once
// U = W ∗ p for a radial spectral law p and a radial kernel W: a function of r² = |ω|² with
// ∇U(ω) = q(r²) ω. The compensated confinement (frequencies/compensated_confinement.hpp) needs only
// these two numbers, whether they come from closed forms, a quadrature or a table.

namespace cpm {

class RadialConvolution {
 public:
  virtual ~RadialConvolution() = default;
  // U at |ω|² = r2.
  virtual double value_r2(double r2) const = 0;
  // The factor q with ∇U(ω) = q ω, at |ω|² = r2.
  virtual double gradient_factor(double r2) const = 0;
  virtual int dim() const = 0;
  // The scale σ of p.
  virtual double sigma() const = 0;
};

}  // namespace cpm
