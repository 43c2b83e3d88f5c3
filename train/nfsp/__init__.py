"""NFSP as a ``draw-train`` pipeline: ``draw-train --config configs/nfsp_micro.yaml`` (``pipeline: nfsp``).

The config (:mod:`~train.nfsp.config`, no torch or OpenSpiel needed) and the run with its folder,
evaluations and policy file (:mod:`~train.nfsp.run`). The training is OpenSpiel's NFSP through
the benchmark's learner (:func:`train.bench.openspiel_algorithms.train`); see ``docs/training_nfsp.md``.
"""
