"""cpm in PyTorch: feature maps whose frequencies come from cpm (docs/guide/python.md).

    import cpm.torch
    phi = cpm.torch.FeatureMap.from_generator("coulomb", n=64, dim=16, map="favor")
"""
from .feature_maps import FeatureMap

__all__ = ["FeatureMap"]
