import pytest

from perflab.errors import ConfigError, messages


def test_messages_reports_each_config_error_and_what_is_accepted():
    def bad():
        raise ConfigError("tile 48: not a power of two")
    assert messages([("tile 48", bad), ("tile 32", lambda: None)]) == [
        ("tile 48", "tile 48: not a power of two"), ("tile 32", "(accepted)")]


def test_messages_lets_other_errors_through():
    with pytest.raises(ZeroDivisionError):
        messages([("divide", lambda: 1 / 0)])
