"""What the PyTorch benchmarks ran on: the BLAS behind torch's matrix products and ATen's kernels.

Debian's python3-torch calls whichever libblas.so.3 the loader finds: the reference BLAS
(libblas3) or OpenBLAS, built on its own threads (libopenblas0-pthread, which takes over
libblas.so.3 when installed) or on OpenMP's (libopenblas0-openmp, the same threads as PyTorch's).
The benchmarks choose one per run through LD_LIBRARY_PATH; this names the one that was mapped.
"""
import ctypes
import os
import re

import torch


def blas_in_use():
    """E.g. "OpenBLAS 0.3.21 (kernels SkylakeX, 2 threads)", "OpenBLAS 0.3.21 on OpenMP (...)" or
    "reference BLAS (libblas.so.3.11.0)"."""
    torch.ones(2, 2) @ torch.ones(2, 2)  # make sure the BLAS is loaded
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.split()[-1]}
    blas = sorted(os.path.realpath(p) for p in paths if os.path.basename(p).startswith("libblas.so"))
    if not blas:
        return "unknown BLAS"
    if "openblas" in blas[0]:
        openblas = [p for p in paths if "libopenblas" in os.path.basename(p)]
        lib = ctypes.CDLL(openblas[0] if openblas else blas[0])
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        version = re.search(r"OpenBLAS ([0-9.]+)", lib.openblas_get_config().decode())
        threading = " on OpenMP" if "openblas-openmp" in blas[0] else ""
        return (f"OpenBLAS {version.group(1) if version else ''}{threading} (kernels "
                f"{lib.openblas_get_corename().decode()}, {lib.openblas_get_num_threads()} threads)")
    return f"reference BLAS ({os.path.basename(blas[0])})"


def aten_kernels():
    """The instruction set of ATen's own vectorised kernels, e.g. "AVX2"."""
    found = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    return found.group(1) if found else "unknown"


def allocator():
    """Whether glibc's malloc was told to keep freed memory (no mmap'ed blocks, no heap trimming)."""
    kept = os.environ.get("MALLOC_MMAP_MAX_") == "0" and "MALLOC_TRIM_THRESHOLD_" in os.environ
    return "malloc keeps freed memory" if kept else "malloc defaults"


def describe():
    return f"{blas_in_use()}; ATen kernels {aten_kernels()}; {allocator()}; torch {torch.__version__}"
