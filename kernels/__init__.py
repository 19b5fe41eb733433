"""Triton kernels and their launchers: the fused verification kernel for the GPU path.

They depend on nothing above ``engine.sampling``; the engine imports them lazily, so
importing ``specedit.kernels`` needs neither torch nor triton.
"""
