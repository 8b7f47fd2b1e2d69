"""The registry helper shared by the model providers, the generation providers and the agent tools."""

import threading

import pytest

from lomote.kernel.registry import Registry


def test_it_answers_the_registered_entry_and_none_for_an_unknown_name():
    # given
    shapes = Registry[str]("shape")
    shapes.register("square", "□")

    # when / then
    assert shapes.get("square") == "□"
    assert shapes.get("circle") is None
    assert shapes.registered_names() == shapes.names() == ["square"]


def test_it_refuses_a_name_registered_twice_with_another_entry():
    # given
    shapes = Registry[str]("shape")
    entry = "□"
    shapes.register("square", entry)

    # when / then
    assert shapes.register("square", entry) is entry  # the same entry again is harmless
    with pytest.raises(ValueError, match="shape 'square' registered twice"):
        shapes.register("square", "■")
    assert shapes.get("square") is entry


def test_it_nests_overrides_and_restores_exactly_what_was_there():
    # given
    shapes = Registry[str]("shape")
    shapes.register("square", "□")

    # when
    with shapes.override("square", "■") as outer:
        with shapes.override("square", "▪"), shapes.override("circle", "○"):
            inner = (shapes.get("square"), shapes.get("circle"), shapes.names(), shapes.registered_names())
        between = (shapes.get("square"), shapes.get("circle"), shapes.entries())

    # then
    assert outer == "■"
    assert inner == ("▪", "○", ["circle", "square"], ["square"])
    assert between == ("■", None, {"square": "■"})
    assert shapes.get("square") == "□" and shapes.entries() == {"square": "□"}


def test_it_restores_the_outer_override_even_if_an_inner_one_leaked():
    # given an inner override entered and never exited
    shapes = Registry[str]("shape")
    with shapes.override("square", "■"):
        leaked = shapes.override("square", "▪")
        leaked.__enter__()
        assert shapes.get("square") == "▪"
    # then leaving the outer block removed its own entry only
    assert shapes.get("square") == "▪"
    leaked.__exit__(None, None, None)
    assert shapes.get("square") is None


def test_it_shows_an_override_to_other_threads():
    # given
    shapes = Registry[str]("shape")
    seen = []

    # when
    with shapes.override("square", "■"):
        worker = threading.Thread(target=lambda: seen.append(shapes.get("square")))
        worker.start()
        worker.join()

    # then
    assert seen == ["■"]
