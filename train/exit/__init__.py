"""Expert iteration: ``draw-train --config configs/exit_2p.yaml`` (a config with ``pipeline: exit``).

Expert iteration (Anthony et al., 2017; AlphaZero's loop), driven by one
:class:`train.exit.config.ExitConfig` (:mod:`~train.exit.config`); the loop is
:func:`train.exit.run.run_exit`. A distillation (``configs/distill_2p.yaml``) is its first
iteration alone: the plain search labels, the network learns. Each iteration collects the guided
search's decisions (:mod:`train.exit.collect`), fits the network to them (:mod:`train.exit.fit`)
and evaluates it; the loop, its files, resuming and determinism are on the docs page "Expert
iteration" (``docs/training_exit.md``).
"""
