"""The trading action grammar: the lenient parser (worked examples, then step by step, then several
assets), the instructions, the guided-decoding constraint and the canonical text (parse_action,
action_instructions, decision_constraint, format_decision)."""
from __future__ import annotations

import random
import re
import string

import pytest
from gymnasium.spaces import Text
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.core.answers import InvalidAnswer
from arena_envs.trading.accounting import Order
from arena_envs.trading.parser import (
    ERROR_CODES,
    WARNINGS,
    ParsedAction,
    ParseError,
    action_instructions,
    decision_constraint,
    format_decision,
    parse_action,
)

ONE = ["SPX"]
TWO = ["BTC", "ETH"]
BUY, SELL, HOLD = Order("BUY"), Order("SELL"), Order("HOLD")


def parsed(raw: str, assets=ONE) -> ParsedAction:
    return parse_action(raw, assets)


def error_code(raw: str, assets=ONE) -> str:
    with pytest.raises(ParseError) as err:
        parse_action(raw, assets)
    assert err.value.code in ERROR_CODES
    assert "\n" not in str(err.value) and str(err.value).isascii()
    return err.value.code


# ------------------------------------------------------------------ worked examples


def test_single_words():
    assert parsed("buy") == ParsedAction((BUY,), ())  # size None: the env applies default_size 1.0
    assert parsed("Sell").orders == (SELL,)
    assert parsed("HOLD.").orders == (HOLD,)


def test_decision_lines():
    assert parsed("...analysis...\nDECISION: SELL 50%").orders == (Order("SELL", 0.5),)
    assert parsed("Final Answer: **BUY** 0.3").orders == (Order("BUY", 0.3),)


def test_json():
    assert parsed('{"action": "Buy", "size": 0.25}').orders == (Order("BUY", 0.25),)
    assert parsed('{"decision":"short"}').orders == (SELL,)  # a JSON value is a decision span: synonyms count


def test_ambiguous():
    assert error_code("Should I buy or sell?") == "ambiguous"
    assert error_code("I like buy-and-hold") == "ambiguous"


def test_synonyms_not_in_whole_text():
    assert error_code("We keep a long-term view") == "no_action"
    assert parsed("Decision: we keep a long-term view").orders == (HOLD,)  # KEEP comes first in a span


def test_sizes_and_targets():
    assert parsed("DECISION: BUY 150%") == ParsedAction((Order("BUY", 1.0),), ("size_clipped",))
    assert parsed("DECISION: BUY 10") == ParsedAction((BUY,), ("size_ignored",))
    assert parsed("DECISION: TARGET -0.5").orders == (Order("TARGET", target=-0.5),)
    assert parsed("DECISION: CLOSE").orders == (Order("TARGET", target=0.0),)


def test_empty_and_random_text_space_samples():
    assert error_code("") == "empty"
    assert error_code(" \n\t ") == "empty"
    space = Text(4096, charset=string.printable, seed=20)
    codes = set()
    for _ in range(1000):
        sample = space.sample()
        for assets in (ONE, TWO):
            try:
                result = parse_action(sample, assets)
            except ParseError as error:
                assert error.code in ERROR_CODES and "\n" not in str(error)
                codes.add(error.code)
            else:
                assert len(result.orders) == len(assets)
                assert set(result.warnings) <= set(WARNINGS)
    assert codes == {"no_action"}  # printable noise holds no BUY/SELL/HOLD word, no decision line


FRAGMENTS = ["1" + "0" * 400, "1e400", "NaN", "true", '"target"',
             "DECISION:", "Final answer =", "**", "`", "BUY", "sell", "Hold", "long", "CLOSE", "TARGET", "size",
             "BTC", "ETH:", "SPX", "{", "}", '"action"', '"BTC"', '"actions"', '"size"', ":", ",", "[", "]", '"',
             "-", "=", "%", "0.5", "1", "150", "-0.3", "1,000", "\n", "\n", " ", " ", "\u2014", "\u00e9", "x"]


def assert_parses_or_names_the_error(raw):
    """``raw`` gives one order per asset (known warnings only) or a one-line ParseError with a known code."""
    for assets in (ONE, TWO):
        try:
            result = parse_action(raw, assets)
        except ParseError as error:
            assert error.code in ERROR_CODES and "\n" not in str(error)
        else:
            assert len(result.orders) == len(assets) and set(result.warnings) <= set(WARNINGS)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_fragment_soup_raises_only_parse_errors(raw):
    assert_parses_or_names_the_error(raw)


def test_multi_asset_lines():
    assert parsed("BTC: BUY 0.5\nETH: SELL", TWO) == ParsedAction((Order("BUY", 0.5), SELL), ())
    assert parsed("BTC: BUY", TWO) == ParsedAction((BUY, HOLD), ("missing_asset_default_hold",))


JSON_KEYS = st.sampled_from(["action", "Decision", "signal", "trade", "actions", "size", "weight", "target",
                              "symbol", "ticker", "BTC", "eth", "SPX", "DOGE", "reason"])
JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                        st.sampled_from(["BUY", "sell 0.5", "TARGET", "TARGET -2", "hold", "50%", "BTC", "long 150%"]),
                        st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                st.dictionaries(JSON_KEYS, inner, max_size=4)),
                           max_leaves=20)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.dictionaries(JSON_KEYS, JSON_VALUES, max_size=5), st.sampled_from(["{}", "```json\n{}\n```", "x {} y"]),
       st.text(max_size=200))
def test_json_soup_raises_only_parse_errors(obj, frame, noise):
    import json
    for raw in (frame.format(json.dumps(obj)), noise + "\n" + json.dumps(obj), noise):
        assert_parses_or_names_the_error(raw)


# ------------------------------------------------------------------ step by step


@pytest.mark.parametrize("raw,order", [
    ("**Decision:** Buy", BUY),
    ("Final answer = SELL 25%", Order("SELL", 0.25)),
    ("## Final Decision: HOLD", HOLD),
    ("- Recommendation - **Overweight**", BUY),
    ("__Action__: `SELL` size=0.4", Order("SELL", 0.4)),
    ("Trade: buy, size: 30 %", Order("BUY", 0.3)),
    ("Decision: BUY (0.75)", Order("BUY", 0.75)),
    ("DECISION: BUY 1.", Order("BUY", 1.0)),
    ("DECISION: SELL 0.5.", Order("SELL", 0.5)),
    ("DECISION: BUY 0", Order("BUY", 0.0)),
    ("DECISION: SELL 0%", Order("SELL", 0.0)),
    ("decision: reduce 20 percent", Order("SELL", 0.2)),
    ("Decision: LONG", BUY),
    ("Decision: accumulate", BUY),
    ("Decision: underweight", SELL),
    ("Decision: SHORT", SELL),
    ("Decision: neutral", HOLD),
    ("Decision: wait", HOLD),
    ("Decision: stay put", HOLD),
    ("Decision: FLAT", Order("TARGET", target=0.0)),
    ("Decision: exit the trade", Order("TARGET", target=0.0)),
    ("DECISION: TARGET 50%", Order("TARGET", target=0.5)),
    ("DECISION: target=-1", Order("TARGET", target=-1.0)),
    ("Decision: TARGET price reached, SELL", SELL),  # TARGET without a number is skipped
    ("Decision: SPX: sell 0.2", Order("SELL", 0.2)),
    ("Decision: Buy \u2014 strong momentum", BUY),  # non-ASCII folded
    ("3. **Final decision**: SELL", SELL),
    ("> Action = [BUY 0.2]", Order("BUY", 0.2)),
])
def test_decision_spans(raw, order):
    assert parsed(f"Some analysis first.\n{raw}\nThanks.").orders == (order,)


def test_last_decision_line_with_a_token_wins():
    text = "Recommendation: BUY\nmore thoughts\nDecision: HOLD\nAction: see the notes above"
    assert parsed(text).orders == (HOLD,)
    assert parsed("Decision: SELL\nDecision: BUY 0.5").orders == (Order("BUY", 0.5),)


def test_hyphenated_words_are_no_decision_lines():
    # "Trade-offs:" is not a decision line; the whole-text mode then sees only SELL
    assert parsed("Trade-offs: we could wait\nOverall I SELL.").orders == (SELL,)
    assert parsed("Trade - SELL").orders == (SELL,)


@pytest.mark.parametrize("raw,warnings,size", [
    ("DECISION: BUY 0.25", (), 0.25),
    ("DECISION: BUY 100%", (), 1.0),
    ("DECISION: BUY 250%", ("size_clipped",), 1.0),
    ("DECISION: BUY -0.5", ("size_ignored",), None),
    ("DECISION: BUY -20%", ("size_ignored",), None),
    ("DECISION: BUY 1,000 shares", ("size_ignored",), None),
    ("DECISION: BUY 2", ("size_ignored",), None),
    ("DECISION: BUY 0,5", (), None),  # a decimal comma is no number here
    ("DECISION: BUY 1e-3", (), None),
    ("DECISION: BUY at the open", (), None),
])
def test_size_rules(raw, warnings, size):
    assert parsed(raw) == ParsedAction((Order("BUY", size),), warnings)


def test_hold_and_flat_take_no_size():
    assert parsed("DECISION: HOLD 0.5") == ParsedAction((HOLD,), ())
    assert parsed("DECISION: CLOSE 50%") == ParsedAction((Order("TARGET", target=0.0),), ())


@pytest.mark.parametrize("raw", ["DECISION: TARGET 1.5", "DECISION: TARGET -150%", "Decision: target 5"])
def test_target_out_of_range_is_an_error(raw):
    assert error_code(raw) == "bad_target"


def test_whole_text_mode():
    assert parsed("After weighing everything, I will buy 40% here.").orders == (Order("BUY", 0.4),)
    assert parsed("Sell. Sell now!").orders == (SELL,)
    assert error_code("hold or sell, unclear") == "ambiguous"
    assert error_code("I would go long; the close looks weak") == "no_action"  # synonyms ignored
    assert error_code("a buyer is selling") == "no_action"  # whole words only


# ------------------------------------------------------------------ JSON and markdown variants


@pytest.mark.parametrize("raw,order", [
    ('Here is my answer:\n```json\n{"action": "SELL", "size": "30%"}\n```', Order("SELL", 0.3)),
    ('```json\n{\n  "reasoning": "momentum fades",\n  "decision": "BUY",\n  "position_size": 0.6\n}\n```',
     Order("BUY", 0.6)),
    ('{"Action": "BUY 0.5"}', Order("BUY", 0.5)),
    ('{"trade": "long", "fraction": 0.2}', Order("BUY", 0.2)),
    ('{"signal": "Sell", "weight": "0.1"}', Order("SELL", 0.1)),
    ('{"action": "TARGET", "target": -0.25}', Order("TARGET", target=-0.25)),
    ('{"action": "close"}', Order("TARGET", target=0.0)),
    ('{"decision": {"action": "buy", "size": 0.5}}', Order("BUY", 0.5)),
    ('{\u201caction\u201d: \u201cSELL\u201d}', SELL),  # typographic quotes folded
    ('{"action": "BUY"} then later {"action": "SELL"}', SELL),  # last object first
    ('{"signal": "bullish", "confidence": 0.7}\nDECISION: SELL', SELL),  # no action in it: skipped
    ('{"symbol": "SPX", "action": "BUY", "size": 0.7}', Order("BUY", 0.7)),
    ('{"symbol": "S&P 500", "action": "SELL"}', SELL),  # a lone entry's unknown symbol is ignored
])
def test_json_variants(raw, order):
    assert parsed(raw).orders == (order,)


def test_json_size_key_rules():
    assert parsed('{"action": "BUY", "size": 1.5}') == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "BUY", "size": "120%"}') == ParsedAction((Order("BUY", 1.0),), ("size_clipped",))
    assert parsed('{"action": "BUY", "size": "lots"}') == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "BUY 0.9", "size": 0.3}').orders == (Order("BUY", 0.3),)  # the key wins
    assert parsed('{"action": "HOLD", "size": 0.3}').orders == (HOLD,)
    assert parsed('{"action": "SELL", "size": 1}').orders == (Order("SELL", 1.0),)
    huge = "1" + "0" * 400
    assert parsed('{"action": "BUY", "size": ' + huge + "}") == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "BUY", "size": 1e400}') == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "BUY", "size": NaN}') == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "BUY", "size": true}') == ParsedAction((BUY,), ("size_ignored",))
    assert parsed('{"action": "TARGET", "target": 1e-05}').orders == (Order("TARGET", target=1e-05),)
    assert error_code('{"action": "TARGET", "target": ' + huge + "}") == "bad_target"


def test_json_errors():
    assert error_code('{"action": "TARGET 2"}') == "bad_target"
    code = error_code('{"signal": "bullish"}')
    assert code == "no_action"
    with pytest.raises(ParseError, match="'signal' value 'bullish' is not an action"):
        parse_action('{"signal": "bullish"}', ONE)


# ------------------------------------------------------------------ several assets


@pytest.mark.parametrize("raw,orders,warnings", [
    ("DECISION: SELL 0.5", (Order("SELL", 0.5),) * 2, ("applied_to_all_assets",)),
    ("buy", (BUY, BUY), ("applied_to_all_assets",)),
    ("DECISION:\nBTC: BUY 0.5\nETH: TARGET -0.25", (Order("BUY", 0.5), Order("TARGET", target=-0.25)), ()),
    ("**BTC**: **LONG** 25%\n- eth -> short", (Order("BUY", 0.25), SELL), ()),  # synonyms after a symbol
    ("BTC: HOLD\nthinking again...\nBTC = SELL", (SELL, HOLD), ("missing_asset_default_hold",)),
    ("ETH: BUY 3", (HOLD, BUY), ("size_ignored", "missing_asset_default_hold")),
    ('{"BTC": "BUY", "ETH": {"action": "SELL", "size": 0.5}}', (BUY, Order("SELL", 0.5)), ()),
    ('```json\n{"BTC": "BUY", "ETH": {"action": "SELL", "size": 0.5}}\n```', (BUY, Order("SELL", 0.5)), ()),
    ('{"actions": {"btc": "long", "ETH": "HOLD"}}', (BUY, HOLD), ()),
    ('{"actions": [{"symbol": "ETH", "action": "sell", "size": 0.2}]}', (HOLD, Order("SELL", 0.2)),
     ("missing_asset_default_hold",)),
    ('{"action": "BUY", "size": 0.1}', (Order("BUY", 0.1),) * 2, ("applied_to_all_assets",)),
    ('```json\n[{"symbol": "BTC", "action": "BUY"}, {"ticker": "ETH", "decision": "SELL 0.5"}]\n```',
     (BUY, Order("SELL", 0.5)), ()),
    ('My orders: [{"asset": "eth", "action": "short"}, {"asset": "BTC", "action": "hold"}] done.', (HOLD, SELL), ()),
    ('{"symbol": "ETH", "action": "BUY"}', (HOLD, BUY), ("missing_asset_default_hold",)),
])
def test_multi_asset(raw, orders, warnings):
    assert parsed(raw, TWO) == ParsedAction(orders, warnings)


def test_multi_asset_symbols_are_whole_names():
    assets = ["BTC", "BTCUSD"]
    assert parsed("BTCUSD: SELL\nBTC: BUY", assets).orders == (BUY, SELL)
    assert parsed("BTC-USD: SELL", ["BTC", "ETH"]).warnings == ("applied_to_all_assets",)  # no BTC line


def test_multi_asset_errors():
    assert error_code('{"actions": {"BTC": "BUY", "DOGE": "SELL"}}', TWO) == "unknown_asset"
    assert error_code('{"BTC": "BUY", "ETH": "maybe"}', TWO) == "no_action"
    assert error_code("BTC: TARGET 3", TWO) == "bad_target"
    with pytest.raises(ParseError, match="BTC, ETH"):
        parse_action("nothing to see", TWO)


def test_single_asset_symbol_prefix_is_optional():
    assert parsed("SPX: long 0.5").orders == (Order("BUY", 0.5),)
    assert parsed("spx = sell").orders == (SELL,)
    # one asset: a decision line comes before symbol lines
    assert parsed("SPX: sell-off fears\nDECISION: BUY").orders == (BUY,)


def test_parse_error_pickles():
    import pickle
    with pytest.raises(ParseError) as err:
        parse_action("nothing", ONE)
    copy = pickle.loads(pickle.dumps(err.value))
    assert (copy.code, str(copy)) == ("no_action", str(err.value))
    assert isinstance(copy, InvalidAnswer) and (copy.kind, copy.reason) == ("unparseable", str(err.value))


def test_pathological_inputs_stay_fast():
    import time
    cases = ["BUY" + " " * 4000 + "x", "Decision:" + " " * 4000, "target" + " " * 4000 + "5", "*" * 4096,
             "{" * 4096, '{"a":' * 800, "[" * 4096, "1" * 4096, "Decision: BUY" + "(" * 4000, "BTC" + ":" * 4000,
             "# " * 2000 + "x", '{"action": "buy", "size": "' + " " * 4000 + 'x"}', "buy. " * 800]
    start = time.perf_counter()
    for raw in cases * 5:
        for assets in (ONE, TWO):
            try:
                parse_action(raw, assets)
            except ParseError:
                pass
    # about 0.2 s here; overlapping whitespace runs in a regex make it quadratic
    assert time.perf_counter() - start < 2.0


def test_json_nested_near_the_recursion_limit():
    for depth in range(900, 1000, 3):
        raw = '{"action": ' + "[" * depth + "]" * depth + "}"
        assert error_code(raw) == "no_action"


def test_bad_arguments():
    with pytest.raises(ValueError, match="non-empty"):
        parse_action("buy", [])
    with pytest.raises(ValueError, match="differ"):
        parse_action("buy", ["btc", "BTC"])
    with pytest.raises(TypeError):
        parse_action(None, ONE)  # type: ignore[arg-type]


# ------------------------------------------------------------------ canonical text and constraint


def random_order(rng: random.Random, decimals: int | None) -> Order:
    def value(low: float) -> float:
        x = rng.choice([low, 0.0, 1.0, rng.uniform(low, 1.0), rng.uniform(low, 1.0) * 1e-6])
        return x if decimals is None else round(x, decimals)
    kind = rng.choice(["BUY", "SELL", "HOLD", "TARGET"])
    if kind == "HOLD":
        return HOLD
    if kind == "TARGET":
        return Order("TARGET", target=value(-1.0))
    return Order(kind, size=None if rng.random() < 0.3 else value(0.0))


@pytest.mark.parametrize("assets", [ONE, TWO, ["SPX", "NDX", "BRK.B"]])
def test_format_decision_round_trips(assets):
    rng = random.Random(7)
    for _ in range(500):
        orders = tuple(random_order(rng, None) for _ in assets)
        text = format_decision(orders, assets)
        assert text.isascii() and "e-" not in text
        assert parse_action(text, assets) == ParsedAction(orders, ())


def test_format_decision_examples_and_errors():
    assert format_decision([Order("BUY", 0.5)], ONE) == "DECISION: BUY 0.5"
    assert format_decision([Order("SELL", 1e-05)], ONE) == "DECISION: SELL 0.00001"
    assert format_decision([HOLD, Order("TARGET", target=-0.0)], TWO) == "DECISION:\nBTC: HOLD\nETH: TARGET 0"
    with pytest.raises(ValueError, match="one order per asset"):
        format_decision([HOLD], TWO)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        format_decision([Order("TARGET", target=1.5)], ONE)


def read_canonical(text: str, assets) -> tuple[Order, ...]:
    """An independent reader of the constraint's format: 'KIND[ number]' per asset."""
    lines = text.split("\n")
    bodies = [lines[0].removeprefix("DECISION: ")] if len(assets) == 1 else \
        [line.split(": ", 1)[1] for line in lines[1:]]
    orders = []
    for body in bodies:
        kind, _, number = body.partition(" ")
        if kind == "TARGET":
            orders.append(Order("TARGET", target=float(number) + 0.0))
        elif kind == "HOLD":
            orders.append(HOLD)
        else:
            orders.append(Order(kind, float(number) if number else None))
    return tuple(orders)


@pytest.mark.parametrize("assets", [ONE, TWO, ["SPX", "NDX", "BRK.B"], ["S&P 500", "^GSPC", "btc"]])
def test_constraint_accepts_only_strings_that_parse_as_they_read(assets):
    constraint = decision_constraint(assets)
    assert constraint.kind == "regex"
    pattern = re.compile(constraint.pattern)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.from_regex(pattern, fullmatch=True))
    def check(text):
        assert parse_action(text, assets) == ParsedAction(read_canonical(text, assets), ())

    check()
    rng = random.Random(3)
    for _ in range(300):  # the canonical text of orders with at most 4 decimals is accepted
        orders = [random_order(rng, 4) for _ in assets]
        assert constraint.accepts(format_decision(orders, assets))


def test_constraint_enumerated_examples():
    one = decision_constraint(ONE)
    for text in ["DECISION: BUY", "DECISION: SELL 0.5", "DECISION: BUY 1.0000", "DECISION: HOLD",
                 "DECISION: TARGET -1", "DECISION: TARGET 0.25", "DECISION: SELL 0"]:
        assert one.accepts(text), text
    for junk in ["BUY", "DECISION: buy", "DECISION: BUY 1.5", "DECISION: BUY 0.12345", "DECISION: HOLD 0.5",
                 "DECISION: TARGET", "DECISION: TARGET -1.1", "DECISION: BUY 50%", "DECISION: LONG",
                 "DECISION: BUY\n", "decision: SELL", "DECISION:  BUY", "DECISION: SELL -0.5"]:
        assert not one.accepts(junk), junk
    two = decision_constraint(TWO)
    assert two.accepts("DECISION:\nBTC: BUY 0.5\nETH: SELL")
    for junk in ["DECISION:\nBTC: BUY", "DECISION:\nETH: SELL\nBTC: BUY", "DECISION: BUY",
                 "BTC: BUY\nETH: SELL", "DECISION:\nBTC: BUY\nETH: SELL\n"]:
        assert not two.accepts(junk), junk
    assert decision_constraint(["BRK.B", "SPX"]).accepts("DECISION:\nBRK.B: HOLD\nSPX: HOLD")
    assert not decision_constraint(["BRK.B", "SPX"]).accepts("DECISION:\nBRKxB: HOLD\nSPX: HOLD")


# ------------------------------------------------------------------ instructions


def test_instructions_one_asset_target_rule():
    text = action_instructions(ONE)
    assert text.isascii()
    assert "DECISION: BUY|SELL|HOLD [size 0..1]" in text
    assert "HOLD: keep the position" in text and "go short" in text and "TARGET x" in text
    assert "FLAT" in text and "[-1, 1]" in text


def test_instructions_follow_the_rules():
    signal = action_instructions(ONE, position_rule="signal")
    assert "HOLD: no position for the next day" in signal
    ladder = action_instructions(ONE, position_rule="ladder", allow_short=False, max_exposure=0.5)
    assert "raise the position by s" in ladder and "[0, 0.5]" in ladder and "short selling is off" in ladder
    long_only = action_instructions(ONE, allow_short=False)
    assert "no shorting" in long_only and "go short" not in long_only
    with pytest.raises(ValueError, match="position_rule"):
        action_instructions(ONE, position_rule="martingale")
    with pytest.raises(ValueError, match="max_exposure"):
        action_instructions(ONE, max_exposure=2.0)
    assert "default 0.5" in action_instructions(ONE, default_size=0.5)
    with pytest.raises(ValueError, match="default_size"):
        action_instructions(ONE, default_size=0.0)


def test_instructions_several_assets_show_the_format_that_parses():
    text = action_instructions(TWO)
    assert "BTC: BUY|SELL|HOLD [size 0..1]" in text and "ETH: BUY|SELL|HOLD [size 0..1]" in text
    assert "leave out is HOLD" in text
    assert len(text) < 1200
