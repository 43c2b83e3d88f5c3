"""The compiled (numba) kernels of the searches that deal the hidden tiles: the compiled ISMCTS
(:mod:`agents.ismcts_compiled`, the agent that drives them) and PIMC (:mod:`agents.pimc`).

One module a job: the information set as an engine state (:mod:`.information`), the deals
(:mod:`.deals`) and the hidden-tile model's weights for them (:mod:`.weights`), the rollouts and
hand values (:mod:`.playout`), the search tree and the plain search (:mod:`.tree`), the lockstep
search with batched network evaluation (:mod:`.lockstep`), and what they share: the random
numbers (:mod:`.generators`) and the sets' tables (:mod:`.sets`).

Every kernel is ``@njit(cache=True)``; numba caches each in this folder's ``__pycache__`` and
checks only the cached function's own file, not the files of the kernels it calls.
"""
