"""Tests of taxoforge.memory: the cyclic collector paused around a block, its state restored."""

import gc

import pytest

from taxoforge.memory import cycle_collection_paused


@pytest.fixture(autouse=True)
def _collector_enabled_after():
    yield
    gc.enable()


def test_the_collector_is_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with cycle_collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_blocks_enable_it_only_when_the_outermost_ends():
    with cycle_collection_paused():
        with cycle_collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it paused: it leaves it paused
    assert gc.isenabled()


def test_an_error_in_the_block_still_enables_it():
    with pytest.raises(KeyError):
        with cycle_collection_paused():
            raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    with cycle_collection_paused():
        pass
    assert not gc.isenabled()


def test_as_a_decorator_it_pauses_every_call():
    @cycle_collection_paused()
    def state():
        return gc.isenabled()

    assert state() is False and state() is False
    assert gc.isenabled()


def test_cycles_made_in_the_block_are_collected_after_it():
    class Node:
        pass

    with cycle_collection_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
    assert gc.collect() >= 2
