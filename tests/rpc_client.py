"""The blocking JSON-RPC client the server tests use: ``specedit.bench.rpc_client``."""

from specedit.bench.rpc_client import Closed, RpcClient

__all__ = ["Closed", "RpcClient"]
