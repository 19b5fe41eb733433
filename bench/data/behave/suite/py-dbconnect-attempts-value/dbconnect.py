"""Open database connections with retries, for the worker processes.

During a primary fail-over the database refuses connections for a few
seconds; ``connect`` keeps trying, with a growing pause, before giving up.
"""

import random
import socket
import time

MAX_ATTEMPTS = 3
CONNECT_TIMEOUT = 3
BASE_PAUSE = 0.5
MAX_PAUSE = 8.0


class ConnectionFailed(Exception):
    def __init__(self, host, attempts, last_error):
        super().__init__(f"could not connect to {host} after {attempts} attempts: {last_error}")
        self.host = host
        self.attempts = attempts
        self.last_error = last_error


def parse_dsn(dsn):
    """(host, port, database) from 'host[:port]/database'."""
    hostport, _sep, database = dsn.partition("/")
    host, _sep, port = hostport.partition(":")
    if not host or not database:
        raise ValueError(f"bad DSN {dsn!r}")
    return host, int(port or 5432), database


def pause_for(attempt, rng=random.random):
    """Exponential back-off with jitter: about BASE_PAUSE * 2**(attempt-1)."""
    pause = min(MAX_PAUSE, BASE_PAUSE * 2 ** (attempt - 1))
    return pause * (0.5 + rng() / 2)


def open_socket(host, port, timeout=CONNECT_TIMEOUT):
    return socket.create_connection((host, port), timeout=timeout)


def connect(dsn, opener=open_socket, sleep=time.sleep):
    """A connected socket to the database of ``dsn``; ConnectionFailed when
    every attempt fails."""
    host, port, _database = parse_dsn(dsn)
    last_error = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            return opener(host, port, timeout=CONNECT_TIMEOUT)
        except OSError as e:
            last_error = e
            if attempt < MAX_ATTEMPTS:
                sleep(pause_for(attempt))
    raise ConnectionFailed(host, MAX_ATTEMPTS, last_error)


def healthy(dsn, opener=open_socket):
    """Whether one quick connection attempt succeeds."""
    host, port, _database = parse_dsn(dsn)
    try:
        opener(host, port, timeout=1).close()
    except OSError:
        return False
    return True
