"""solver.cached.cached_property: computed on the first read only, kept in the instance."""

import pytest

from solver.cached import cached_property


class _Counted:
    def __init__(self) -> None:
        self.calls = 0

    @cached_property
    def value(self) -> int:
        """Twice the number of calls so far plus 40: 42 on the first."""
        self.calls += 1
        return 40 + 2 * self.calls


def test_the_first_read_computes_and_later_reads_find_the_kept_value():
    thing = _Counted()
    assert [thing.value, thing.value, thing.value] == [42, 42, 42]
    assert thing.calls == 1
    assert thing.__dict__["value"] == 42


def test_each_instance_computes_its_own_and_a_deleted_value_is_computed_again():
    one, two = _Counted(), _Counted()
    assert (one.value, two.value) == (42, 42)
    del one.__dict__["value"]
    assert one.value == 44 and one.calls == 2 and two.calls == 1


def test_a_value_written_into_the_instance_is_read_without_computing():
    thing = _Counted()
    thing.__dict__["value"] = 7
    assert thing.value == 7 and thing.calls == 0


def test_the_class_gives_the_descriptor_with_its_docstring():
    assert isinstance(_Counted.value, cached_property)
    assert _Counted.value.__doc__.startswith("Twice the number")


def test_one_property_under_two_names_is_refused():
    prop = cached_property(lambda self: 1)
    # __set_name__'s TypeError (Python 3.11 wraps it in a RuntimeError)
    with pytest.raises((TypeError, RuntimeError), match=r"__set_name__|two different names"):

        class _Twice:
            a = prop
            b = prop
