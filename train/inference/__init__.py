"""The hidden-tile model's training: ``draw-train --config configs/inference.yaml`` (``pipeline: inference``).

Games are played on the batched environment by one policy at every seat
(:mod:`train.inference.collect`), each decision recorded as the acting seat's observation and
the true place of every tile; an MLP learns the places in torch (:mod:`train.inference.fit`)
and is exported as a :mod:`agents.hidden_tiles` model file; :mod:`train.inference.run` holds the
run and its summary. The docs page "The hidden-tile model" (``docs/inference.md``) describes
all of it.
"""
