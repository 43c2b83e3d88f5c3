"""The address of a Ray cluster that a command connects to (``draw-bench --address``,
``draw-train --address``), checked before anything starts.

``ray.init(address="HOST:PORT")`` waits minutes for a head that is not there: it retries its GCS
client about twenty times, each try waiting for a connection up to its own timeout (the retry
loop of ``ray._private.node.Node._init_gcs_client``). :func:`check_address` instead tries one TCP
connection to the address first, for at most :data:`CONNECT_SECONDS`, and refuses in one line an
address where nothing answers. ``local`` (a Ray instance started for the run) and ``auto`` (the
cluster this machine belongs to, which Ray finds or refuses at once) are left to Ray.
"""

from __future__ import annotations

import socket

from train.config import ConfigError

#: How long the check waits for the head's port to accept a connection.
CONNECT_SECONDS = 5.0
#: The addresses Ray resolves itself.
RAY_KEYWORDS = ("local", "auto")


def check_address(address: str, option: str = "--address") -> None:
    """Refuse ``address`` (``HOST:PORT``, ``ray://HOST:PORT``, ``local`` or ``auto``) unless it is
    one of :data:`RAY_KEYWORDS` or something accepts a connection on its port within
    :data:`CONNECT_SECONDS`.

    Raises:
        ConfigError: one line naming ``option``, the address and why.
    """
    if address in RAY_KEYWORDS:
        return
    host, separator, port = address.removeprefix("ray://").rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # an IPv6 address: [::1]:6379
    if not separator or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{option} must be HOST:PORT (such as 127.0.0.1:6379), local or auto, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as error:
        why = f"no answer within {CONNECT_SECONDS:g} s" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise ConfigError(
            f"{option} {address}: no Ray head answers there ({why}): start one "
            "with `ray start --head` on that machine, give its address, or use --address local"
        ) from None
