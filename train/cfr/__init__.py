"""The exact solver: CFR+ over the enumerated game tree of a small 2-player variant (``pipeline: cfr``)."""
