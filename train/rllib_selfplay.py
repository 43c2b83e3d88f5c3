"""Multi-agent PPO self-play on Draw dominoes with RLlib: the command (the pipeline is :mod:`train.rllib.run`).

Run it in ``.venv-rllib`` (``make integrations-env``: RLlib pins gymnasium 1.2.x)::

    .venv-rllib/bin/python train/rllib_selfplay.py --config configs/rllib_selfplay.yaml --iterations 20
"""

from train.rllib.config import RLlibConfig
from train.rllib.run import load_config, main

__all__ = ["RLlibConfig", "load_config", "main"]

if __name__ == "__main__":
    main()
