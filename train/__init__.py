"""Training Draw dominoes policies: ``draw-train --config FILE`` (:mod:`train.cli`).

A config's ``pipeline`` key picks the pipeline, each a subpackage with its config beside its code
(expert iteration in :mod:`train.exit`, self-play MaskablePPO in :mod:`train.selfplay`, ...);
:mod:`train.config` loads and checks every config. A run ends with a policy file (``final.npz`` +
``final.json``) that any command plays as ``network:path=FILE``. The guide: ``docs/training.md``.
"""
