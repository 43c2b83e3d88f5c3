"""Draw dominoes in other RL libraries: RLlib (:mod:`integrations.rllib`, needs ``.venv-rllib``).

The Tianshou and TorchRL examples live in ``examples/``; see ``docs/integrations.md``.
"""
