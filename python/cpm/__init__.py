"""cpm from Python: random-feature frequencies, feature maps, particles learned from data and
every command's studies, over the C++ library (docs/guide/python.md).

    import cpm
    omega = cpm.generate_features("coulomb", n=256, dim=8, seed=1)     # (256, 8)
    errors = cpm.kernel_errors(x, omega)                               # {frobenius, ...}
    particles, history, report = cpm.learn_particles(x, y, n=64)       # alignment + repulsion
    results = cpm.run_config("examples/features_gaussian.toml", "features", output="out/f")
    results.tables["summary"]                                          # a pandas DataFrame

Arrays: an (N, d) float64 array in Fortran order is the library's particle layout and crosses
without a copy where a call works in place (`project`); returned arrays are the library's own
memory. Bad input raises ValueError with the command line's one-line message; Ctrl-C raises
KeyboardInterrupt. cpm.reader reads output files; cpm.torch holds the PyTorch side: particle
feature maps, kernel attention and Phase A on a model's own heads.
"""
try:
    from . import _cpm  # noqa: F401  (its absence is reported here, in one line)
except ImportError as error:  # an install of a build that compiled only the command
    raise ImportError(f"cpm: the compiled module cpm._cpm is missing or broken ({error}); build "
                      "the target cpm_python (make test builds it), then install again") from None
from . import reader
from ._cpm import (
    __version__,
    attention_features,
    attention_phase_a,
    classifier_logits,
    data_folder,
    empirical_kernel,
    energy_distance_to_gaussian,
    feature_map,
    generate_features,
    kernel_errors,
    learn_particles,
    linear_attention,
    load_classification,
    project,
    rff_phases,
)
from .commands import Results, approximation_points, check_config, run_config
from .config import to_toml

__all__ = [
    "Results", "__version__", "approximation_points", "attention_features", "attention_phase_a",
    "check_config",
    "classifier_logits", "data_folder", "load_classification",
    "empirical_kernel", "energy_distance_to_gaussian", "feature_map", "generate_features",
    "kernel_errors", "learn_particles", "linear_attention", "project", "reader", "rff_phases",
    "run_config", "to_toml",
]
