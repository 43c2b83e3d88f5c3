"""Tuning sweeps (``draw-tune``): a grid of ``draw-train`` settings run as Ray Tune trials, each
scored by the exact exploitability of its final policy (docs/tuning.md)."""
