#!/usr/bin/env python3
"""Writes the recipe (fuzz/hdf5_recipe.hpp) of an HDF5 file: the seed corpus of the HDF5 fuzz
targets is made from real files this way.

    python3 fuzz/hdf5_to_recipe.py run.h5 > fuzz/corpus/fuzz_run_checkpoint/run_2d

Datasets of more than MAX_LISTED values are written as `random SEED` of their shape (the
fuzzer explores the layout, not the numbers); byte datasets (the vocabulary) up to 4,096 values
are kept as they are.
"""
import sys

import h5py
import numpy as np

MAX_LISTED = 64

TYPES = {("i", 1): "i8", ("i", 4): "i32", ("i", 8): "i64", ("u", 1): "u8", ("u", 8): "u64",
         ("f", 4): "f32", ("f", 8): "f64"}


def type_name(dtype):
    if dtype.kind in "SO" or h5py.check_string_dtype(dtype) is not None:
        info = h5py.check_string_dtype(dtype)
        return "vstring" if info is not None and info.length is None else "string"
    return TYPES.get((dtype.kind, dtype.itemsize), "f64")


def shape_text(shape):
    return "scalar" if shape == () else "x".join(str(d) for d in shape)


def values_text(values, dtype, limit):
    flat = np.asarray(values).reshape(-1)
    if type_name(dtype) in ("string", "vstring"):
        texts = (v.decode(errors="replace") if isinstance(v, bytes) else str(v) for v in flat)
        return "|".join(t.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")
                        for t in texts)
    if flat.size > limit:
        return "random 1"
    return " ".join(repr(float(v)) if dtype.kind == "f" else str(int(v)) for v in flat)


def attributes(path, obj, out):
    for name, value in obj.attrs.items():
        dtype = obj.attrs.get_id(name).dtype
        shape = obj.attrs.get_id(name).shape
        out.append(f"attribute {path} {name} {type_name(dtype)} {shape_text(shape)} "
                   f"{values_text(value, dtype, MAX_LISTED)}")


def main():
    out = []
    with h5py.File(sys.argv[1], "r") as f:
        attributes("/", f, out)

        def visit(name, obj):
            path = "/" + name
            if isinstance(obj, h5py.Group):
                out.append(f"group {path}")
            else:
                layout = "chunked" if obj.chunks else "contiguous"
                limit = 4096 if obj.dtype.kind == "u" and obj.dtype.itemsize == 1 else MAX_LISTED
                values = obj[()] if obj.size <= limit else np.zeros(obj.size + 1)
                out.append(f"dataset {path} {type_name(obj.dtype)} {shape_text(obj.shape)} "
                           f"{layout} {values_text(values, obj.dtype, limit)}")
            attributes(path, obj, out)

        f.visititems(visit)
    print("\n".join(out))


if __name__ == "__main__":
    main()
