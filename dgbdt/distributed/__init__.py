"""What runs over several processes: the collectives (comm), the deadline on
each of them (deadline) and float sums that do not depend on the number of
ranks (exact_sum).  ``world_comm`` is here for scripts run under mpiexec (the
README's data-parallel example): MPI's world, or one process."""

from .comm import world_comm

__all__ = ["world_comm"]
