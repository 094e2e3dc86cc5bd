"""Tables of named entries with LightGBM-style aliases (objectives, metrics, parameters).

An entry is anything with a ``name`` (canonical) and ``aliases`` (a tuple of
other accepted spellings).  The parameter table takes its choices from
``Registry.aliases`` and the docs list them in registration order, so
registering an entry is all it takes to make it a valid value.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar


class _Named(Protocol):
    """What an entry has: its canonical name and its other spellings."""

    @property
    def name(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


_E = TypeVar("_E", bound=_Named)


class Registry(Generic[_E]):
    """Entries by canonical name (``entries``) and every accepted spelling
    mapped to its canonical name (``aliases``: for each entry its name, then
    its aliases, entries in registration order)."""

    def __init__(self) -> None:
        self.entries: dict[str, _E] = {}
        self.aliases: dict[str, str] = {}

    def add(self, entry: _E) -> _E:
        """Register ``entry`` and return it (usable as a class decorator).

        A spelling may name one entry only: a second one is a RuntimeError at
        import, not a silent shadowing.
        """
        for spelling in (entry.name, *entry.aliases):
            if self.aliases.get(spelling, entry.name) != entry.name:
                raise RuntimeError(
                    f"alias {spelling!r} is listed for both {self.aliases[spelling]!r} "
                    f"and {entry.name!r}"
                )
        for spelling in (entry.name, *entry.aliases):
            self.aliases[spelling] = entry.name
        self.entries[entry.name] = entry
        return entry

    def canonical(self, text: object) -> str | None:
        """The canonical name of a spelling (case and surrounding blanks ignored), or None."""
        return self.aliases.get(str(text).strip().lower())

    def alias_names(self) -> list[str]:
        """Every accepted spelling that is not itself a canonical name."""
        return [a for a in self.aliases if a not in self.entries]
