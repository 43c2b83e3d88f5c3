"""Self-play MaskablePPO: the config (:mod:`~train.selfplay.config`) and the run (:mod:`~train.selfplay.run`)."""
