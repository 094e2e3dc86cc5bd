"""AgreedError: an error every rank raises alike keeps its own class."""

import pickle

import pytest

from dgbdt.distributed.comm import AgreedError, SerialComm, agree_on_errors, agreed
from dgbdt.io import DataFormatError


def _raise(error):
    raise error


@pytest.mark.parametrize(
    "error",
    [
        ValueError("bad value"),
        RuntimeError("rank 1 failed: x"),
        DataFormatError("f.csv, line 3: cannot parse"),
    ],
)
def test_an_agreed_error_is_still_of_its_class(error):
    try:
        _raise(error)
    except Exception as exc:  # noqa: BLE001
        marked = agreed(exc)
    assert isinstance(marked, AgreedError) and isinstance(marked, type(error))
    assert str(marked) == str(error) and type(marked).__name__ == type(error).__name__
    assert marked.__traceback__ is error.__traceback__ is not None
    assert agreed(marked) is marked
    with pytest.raises(type(error), match=str(error)[:8]):
        raise marked
    back = pickle.loads(pickle.dumps(marked))  # as the original class
    assert type(back) is type(error) and str(back) == str(error)


def test_one_process_raises_the_error_itself():
    error = ValueError("mine")
    with pytest.raises(ValueError) as info:
        agree_on_errors(SerialComm(), error)
    assert info.value is error and not isinstance(info.value, AgreedError)
