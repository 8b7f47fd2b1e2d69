"""The price table: integer credits per operation, parameters checked."""

import pytest

from billing.services.pricing import OPERATIONS, PRICES, price_of
from lomote.kernel.exceptions import InvalidInput


@pytest.mark.parametrize(
    ("operation", "params", "price"),
    [
        ("image.generate", {}, 40),
        ("image.generate", {"count": 3, "prompt": "retro poster"}, 120),
        ("image.generate", None, 40),
        ("video.generate", {}, 100),  # 5 seconds by default
        ("video.generate", {"seconds": 12}, 240),
        ("3d.generate", {"count": 99}, 150),  # flat: units do not apply
    ],
)
def test_it_prices_each_operation_in_whole_credits(operation, params, price):
    assert price_of(operation, params) == price
    assert isinstance(price_of(operation, params), int)


@pytest.mark.parametrize(
    ("operation", "params", "field"),
    [
        ("image.edit", {}, "operation"),
        ("image.generate", {"count": 0}, "params"),
        ("image.generate", {"count": 9}, "params"),
        ("image.generate", {"count": True}, "params"),
        ("image.generate", {"count": 2.0}, "params"),
        ("video.generate", {"seconds": "5"}, "params"),
        ("video.generate", {"seconds": 61}, "params"),
        ("video.generate", [5], "params"),
    ],
)
def test_it_refuses_unknown_operations_and_bad_units(operation, params, field):
    with pytest.raises(InvalidInput) as refused:
        price_of(operation, params)
    assert set(refused.value.details["fields"]) == {field}


def test_it_lists_the_operations_the_api_accepts():
    assert [op for op, _ in OPERATIONS] == list(PRICES)
