"""Expert iteration: ``draw-train --config configs/exit_2p.yaml`` (a config with ``pipeline: exit``).

Expert iteration (Anthony et al., 2017; AlphaZero's loop), driven by one
:class:`train.exit.config.ExitConfig` (:mod:`~train.exit.config`); the loop is
:func:`train.exit.run.run_exit`. A distillation (``configs/distill_2p.yaml``) is its first
iteration alone: the plain search labels, the network learns.

1. **collect** (:mod:`train.exit.collect`): the compiled search guided by the current network
   (:func:`agents.network_search.network_evaluator`: its policy as the prior, its value mixed
   with the rollouts at the leaves once it has one; before iteration ``guided_from``, the plain
   compiled search at ``plain_simulations``, which needs no network and is far cheaper per
   simulation) plays ``matches`` matches, with itself in every seat or beside the ``partners``
   drawn per match, many in
   lockstep (``lockstep`` games per shard, their searches batched into one network call per
   simulation round). Every decision with more than one legal action records the observation,
   the mask, the search's value of each root action and, once the hand ends, the acting seat's
   zero-sum hand points / 40 (the outcome, the unit of the search's values). Shards run on
   ``workers`` local processes, or with ``address`` on the actors of an existing Ray cluster.
2. **fit** (:mod:`train.exit.fit`): starting from the current network (a
   :class:`train.network.PolicyValueNetwork`), the policy network learns
   ``softmax(values / temperature)`` over the legal actions (cross-entropy) and the value network
   the outcome (mean squared error), on the last ``window`` iterations' data.
3. **evaluate**: the new policy alone, duplicate matches against ``eval.opponents`` and the
   previous iteration (Wilson intervals), logged to ``eval.csv``, TensorBoard and
   ``strength.png``.

Each iteration ``k`` lives in ``output_dir/iter_{k:03d}/`` (``data.npz``, ``policy.npz`` +
``policy.json``, ``eval.json``), every file written under a temporary name and renamed;
``state.json`` records the iterations completed and is written last. Rerunning the same command
continues after the last completed iteration (a larger ``iterations`` extends the run); other
settings that change the results are refused unless ``--overwrite``. Everything random derives
from ``seed`` and the iteration and shard numbers, and the fit runs on one thread, so a seeded
run repeats exactly, interrupted or not.
"""
