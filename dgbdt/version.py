"""The package's version, in one place: the package face, the Numba cache key
and the files dgbdt writes read it from here."""

__version__ = "0.1.0"
