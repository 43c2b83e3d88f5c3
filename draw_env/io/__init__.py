"""Files and records: atomic writes and checks of output paths (:mod:`draw_env.io.files`), bounded
readers of received files (:mod:`draw_env.io.untrusted`), game records (:mod:`draw_env.io.records`)
and the ``draw-replay`` command (:mod:`draw_env.io.replay`)."""
