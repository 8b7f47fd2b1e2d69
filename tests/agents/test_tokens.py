"""The offline token estimate: deterministic, additive enough for budgets, and shaped like a BPE count."""

from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from agents.tokens import estimate_tokens


def test_it_counts_nothing_for_nothing_and_a_common_word_as_one():
    assert estimate_tokens("") == 0
    assert estimate_tokens("   \n") == 0
    assert estimate_tokens("poster") == 1
    assert estimate_tokens("boulangerie") == 2


def test_it_prices_text_like_an_encoder_would():
    # about a token per short word, a token per CJK character, digits in threes, punctuation runs in pairs
    assert estimate_tokens("make a warm poster") == 4
    assert estimate_tokens("日本語") == 3
    assert estimate_tokens("123456") == 2
    assert estimate_tokens('{"a":1}') == 1 + 1 + 1 + 1 + 1


@given(st.text(max_size=200), st.text(max_size=200))
def test_a_longer_text_never_costs_less_and_joining_costs_about_the_sum(left, right):
    joined = estimate_tokens(left + " " + right)
    assert joined >= max(estimate_tokens(left), estimate_tokens(right))
    assert joined == estimate_tokens(left) + estimate_tokens(right)  # a space never merges two pieces


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_ascii_text_counts_the_same_on_its_fast_path_as_piece_by_piece(text):
    # " é" is one more piece and takes the text off the ASCII fast path: the rest must count the same there
    assert estimate_tokens(text + " é") == estimate_tokens(text) + 1


def _fitted(head: str, lines: list[str], limit: int) -> str:
    """The definition: the most lines, half from each end, whose whole text the estimate puts within `limit`."""
    from agents.runtime.compaction import ELIDED

    for keep in range(len(lines), -1, -1):
        shown = lines if keep >= len(lines) else [*lines[: (keep + 1) // 2], ELIDED, *lines[len(lines) - keep // 2 :]]
        text = "\n".join([head, *shown])
        if keep == 0 or estimate_tokens(text) <= limit:
            return text
    raise AssertionError("unreachable")


@given(st.lists(st.text(max_size=120), max_size=40), st.integers(min_value=0, max_value=300))
def test_a_summary_keeps_the_most_lines_that_fit_estimating_each_line_once(lines, limit):
    # given summary lines (one line each, as the summary writes them) and a token limit
    from agents.runtime import compaction

    lines = [" ".join(line.split()) for line in lines]
    # when they are fitted, then the text is what re-estimating the whole text for every line dropped gives
    with patch.object(compaction, "MAX_SUMMARY_TOKENS", limit):
        assert compaction._within("Extractive summary:", lines) == _fitted("Extractive summary:", lines, limit)
