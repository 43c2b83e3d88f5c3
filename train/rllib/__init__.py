"""Multi-agent PPO self-play with RLlib: the config (:mod:`~train.rllib.config`, no Ray needed) and the run
(:mod:`~train.rllib.run`, in ``.venv-rllib``); ``train/rllib_selfplay.py`` is the command."""
