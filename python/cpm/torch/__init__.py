"""cpm in PyTorch: the feature maps of linear attention with cpm's particles, and the attention
on them (docs/guide/python.md).

    import cpm.torch
    phi = cpm.torch.ParticleFeatureMap(head_dim=16, features=64, heads=4, map="favor")
    attention = cpm.torch.KernelAttention(64, 4, phi)
    table = cpm.torch.phase_a(model, batches)       # Phase A on every head of the model, frozen
"""
from .classifier import TransformerClassifier
from .feature_maps import ParticleFeatureMap
from .kernel_attention import KernelAttention
from .phase_a import phase_a

__all__ = ["KernelAttention", "ParticleFeatureMap", "TransformerClassifier", "phase_a"]
