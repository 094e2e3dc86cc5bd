"""Every public function and class of dgbdt has a docstring, and so has every
public method of the public classes."""

import inspect

import pytest

import dgbdt


def _public():
    for name in dgbdt.__all__:
        obj = getattr(dgbdt, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj
            own = [c for c in getattr(obj, "__mro__", ()) if c.__module__.startswith("dgbdt")]
            for cls in own:
                for attr, member in vars(cls).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if inspect.isfunction(member) or isinstance(member, property):
                        yield f"{name}.{attr}", member  # noqa: B020


@pytest.mark.parametrize(
    "name, obj", list(_public()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_public_api_has_docstrings(name, obj):
    doc = inspect.getdoc(obj) if not isinstance(obj, property) else obj.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
