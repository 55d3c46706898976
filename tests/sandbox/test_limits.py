"""The limits have one definition (arena/limits.py): the files' `limits` table, the limit
flags and what `hello` tells a bot are all made from `Limits`."""

from __future__ import annotations

import dataclasses

import pytest

from arena.config.tournament_file import TournamentError, validate_config
from arena.game.protocol import Hello, LimitsInfo, json_schema
from arena.limits import (
    LIMIT_FLAGS,
    SETTABLE,
    TOLD,
    Limits,
    LimitsError,
    LimitsSettings,
    help_of,
    limits_from_flags,
)
from arena.sandbox import Limits as SandboxLimits
from arena.sandbox.base import Limits as BaseLimits


def test_one_type_everywhere():
    assert SandboxLimits is Limits and BaseLimits is Limits
    assert SETTABLE == ("startup_s", "decision_s", "time_bank_s", "memory_mb", "cpu_s", "cpus")
    assert TOLD == ("startup_s", "decision_s", "time_bank_s", "max_line_bytes", "memory_mb")
    assert list(LIMIT_FLAGS) == list(SETTABLE)
    assert LIMIT_FLAGS["cpu_s"].flag == "--cpu-s" and LIMIT_FLAGS["cpu_s"].type is int
    assert LIMIT_FLAGS["decision_s"].type is float


def test_the_files_table_has_the_defaults_and_gives_the_limits():
    assert LimitsSettings().limits() == Limits()
    assert LimitsSettings().model_dump() == Limits().settings() == {
        "startup_s": 10.0, "decision_s": 1.0, "time_bank_s": 10.0, "memory_mb": 512, "cpu_s": 600, "cpus": 1.0,
    }
    limits = LimitsSettings(decision_s=0.25, cpu_s=30).limits()
    assert limits == dataclasses.replace(Limits(), decision_s=0.25, cpu_s=30)
    assert limits.max_line_bytes == 1 << 20 and limits.pids == 64  # not settable: the defaults


def test_a_tournament_file_is_checked_by_the_same_bounds():
    config = validate_config({"game": "3up3down", "seats": 3, "bots": ["a", "b", "c"], "limits": {"cpu_s": 5, "memory_mb": 64}})
    assert config.limits.limits() == dataclasses.replace(Limits(), cpu_s=5, memory_mb=64)
    with pytest.raises(TournamentError) as caught:
        validate_config({"game": "3up3down", "seats": 3, "bots": ["a", "b", "c"], "limits": {"cpu_s": 0, "pids": 9}})
    assert caught.value.mistakes == [
        "limits.cpu_s = 0: Input should be greater than or equal to 1",
        "unknown key 'limits.pids'; allowed keys: startup_s, decision_s, time_bank_s, memory_mb, cpu_s, cpus",
    ]


def test_limit_flags_are_checked_and_named():
    assert limits_from_flags(decision_s=None, memory_mb=None) == Limits()
    assert limits_from_flags(decision_s=2.5, cpu_s=None) == dataclasses.replace(Limits(), decision_s=2.5)
    with pytest.raises(LimitsError) as caught:
        limits_from_flags(decision_s=0.0)
    assert str(caught.value) == "--decision-s 0: must be greater than 0"
    with pytest.raises(LimitsError) as caught:
        limits_from_flags(memory_mb=8, startup_s=601.0)
    assert caught.value.mistakes == [
        "--startup-s 601: must be less than or equal to 600",
        "--memory-mb 8: must be greater than or equal to 16",
    ]
    assert str(caught.value).startswith("2 mistakes in the limit flags:\n  - --startup-s 601")


def test_hello_tells_the_told_part():
    limits = dataclasses.replace(Limits(), decision_s=0.5, max_line_bytes=4096, cpu_s=9)
    told = limits.told()
    assert isinstance(told, LimitsInfo)
    assert told.model_dump() == {
        "startup_s": 10.0, "decision_s": 0.5, "time_bank_s": 10.0, "max_line_bytes": 4096, "memory_mb": 512,
    }
    hello = Hello(game="3up3down", players=3, rules={}, games=1, seed=1, limits=told)
    assert hello.limits.decision_s == 0.5
    schema = json_schema()["referee_to_bot"]["$defs"]["LimitsInfo"]
    assert schema["required"] == list(TOLD)
    assert schema["properties"]["startup_s"]["description"] == "From process start to the `ready` answer."
    assert schema["additionalProperties"] is False


def test_cpu_s_has_one_meaning():
    assert help_of("cpu_s") == "CPU seconds per bot per game."
    assert LimitsSettings.model_fields["cpu_s"].description == help_of("cpu_s")
