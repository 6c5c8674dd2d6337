"""No network but this machine, for the processes of the hand-out test (tests/test_handout.py).

That test puts this folder on PYTHONPATH, so Python imports this module as it starts, in the test's
pytest and in every kernel and process they start. From then on a socket that connects to any host
but this machine raises, so a lesson that tried to download something (its helpers from GitHub)
would fail at once, saying why. Connections to this machine stay open: a kernel talks to Jupyter
over loopback, and DDP's processes meet at 127.0.0.1.
"""

import ipaddress
import socket


class NetworkBlocked(ConnectionRefusedError):
    """A connection to another host, in the hand-out test, which has no network on purpose."""


def _on_this_machine(address: object) -> bool:
    if not isinstance(address, tuple):  # a Unix socket's path
        return True
    host = str(address[0]).split("%")[0]  # an IPv6 address may name its interface: ::1%lo
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: reaching it would leave this machine
        return False


def _guarded(method):
    def connect(self, address, *args):
        if not _on_this_machine(address):
            raise NetworkBlocked(f"no network in the hand-out test: a connection to {address!r} was refused")
        return method(self, address, *args)

    return connect


socket.socket.connect = _guarded(socket.socket.connect)
socket.socket.connect_ex = _guarded(socket.socket.connect_ex)
