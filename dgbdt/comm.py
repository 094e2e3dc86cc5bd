"""Where earlier versions' README imported ``world_comm`` from
(``from dgbdt.comm import world_comm``); the module is
dgbdt.distributed.comm."""

from .distributed.comm import world_comm

__all__ = ["world_comm"]
