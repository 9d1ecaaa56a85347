import pytest

from perflab.errors import ConfigError, messages, refusal, require


def test_messages_reports_each_config_error_and_what_is_accepted():
    def bad():
        raise ConfigError("tile 48: not a power of two")
    assert messages([("tile 48", bad), ("tile 32", lambda: None)]) == [
        ("tile 48", "tile 48: not a power of two"), ("tile 32", "(accepted)")]


def test_messages_lets_other_errors_through():
    with pytest.raises(ZeroDivisionError):
        messages([("divide", lambda: 1 / 0)])


def test_require_raises_its_reason_unless_the_rule_holds():
    require(32 <= 64 <= 1024, "block=64: 32 to 1024 threads")
    with pytest.raises(ConfigError, match="block=48: whole warps") as exc:
        require(48 % 32 == 0, "block=48: whole warps", short="whole warps")
    assert exc.value.short == "whole warps"
    assert refusal(require, False, "no room") == "no room"
    assert refusal(require, True, "no room") is None
