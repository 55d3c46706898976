"""The one small API every game implements, and the only one the rest of arena uses.

A `Game` holds the facts about a game (name, seat range, rule options) and makes new
states; a `State` is one game in progress: whose decision it is, the legal actions in a
stable order, what each seat may observe, applying an action, and the result once over
(plus, for replays after the game, everything: `spectator_view()` and `full_events()`).
Actions, observations and events are plain JSON-able data (dicts, lists, str, int, bool);
a game declares the shapes of its actions and observations as `typing.TypedDict`s
(`Game.action_type`, `Game.observation_type`) without building or checking any at run time.
All randomness comes from the seed, so (players, options, seed, actions) replays a game.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.replay_tables import ReplayTables

Action = dict[str, Any]
Observation = dict[str, Any]
Event = dict[str, Any]


class GameError(ValueError):
    """A mistake a user or a bot can make: the message says what is wrong and what is allowed."""


class UnknownGame(GameError):
    """No game is registered under that name."""


class BadOption(GameError):
    """A rule option is unknown, of the wrong type, or out of range."""


class BadPlayerCount(GameError):
    """The number of players is outside the game's seat range."""


class IllegalAction(GameError):
    """The action is not among the legal actions now (the state is unchanged)."""


@dataclass(frozen=True)
class OptionSpec:
    """One rule option: its name, type, default (our ruling) and a one-line meaning."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    min: int | None = None
    max: int | None = None

    def allowed(self) -> str:
        """Say in words which values are allowed."""
        if self.choices is not None:
            return "one of " + ", ".join(json.dumps(c) for c in self.choices)
        if self.type is bool:
            return "true or false"
        if self.type is int:
            low = "" if self.min is None else f" >= {self.min}"
            high = "" if self.max is None else f" <= {self.max}"
            both = " and".join(part for part in (low, high) if part)
            return "an integer" + both
        return f"a {self.type.__name__}"

    def check(self, value: Any) -> Any:
        """Return the value if it is allowed, else raise BadOption saying what is."""
        ok = isinstance(value, self.type) and not (self.type is int and isinstance(value, bool))
        if ok and self.choices is not None and value not in self.choices:
            ok = False
        if ok and self.type is int:
            if (self.min is not None and value < self.min) or (
                self.max is not None and value > self.max
            ):
                ok = False
        if not ok:
            raise BadOption(
                f"rule option {self.name!r} got {value!r}; allowed: {self.allowed()}"
            )
        return value

    def parse(self, text: str) -> Any:
        """Turn command-line text (`key=value`'s value) into a checked value."""
        raw = text.strip()
        value: Any
        if self.type is bool:
            lowered = raw.lower()
            if lowered in ("true", "yes", "on", "1"):
                value = True
            elif lowered in ("false", "no", "off", "0"):
                value = False
            else:
                value = raw
        elif self.type is int:
            try:
                value = int(raw)
            except ValueError:
                value = raw
        else:
            value = raw
        return self.check(value)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the option (for `arena games --json`)."""
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "help": self.help,
        }
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        return out


class Game(ABC):
    """Facts about one game, and the factory of its states."""

    name: str
    title: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    game_score: str = "the game's own score"
    """What `scores()` counts, in a reader's words, saying which way is better: shown
    beside every game score (the site, `arena match`)."""
    rules_version: str = "1"
    """The version of the rules as this engine plays them: bump it whenever a rule fix makes
    the same (players, options, seed, actions) play differently, so a game stored under an
    older version is known as such (its replay says so) rather than failing verification."""
    action_type: Any = None
    """The shape of an action: a `typing.TypedDict`, or a Union of them told apart by their
    "type" (None: not declared). Declared, not checked: actions stay plain dicts."""
    observation_type: Any = None
    """The shape of `observation(seat)`: a `typing.TypedDict` (None: not declared)."""

    def option_spec(self, name: str) -> OptionSpec:
        """The spec of one option, or BadOption naming the known ones."""
        for spec in self.options:
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in self.options)
        raise BadOption(f"{self.name} has no rule option {name!r}; known options: {known}")

    def resolve_options(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Check the given options and fill in every default; returns a new dict."""
        given = dict(options or {})
        resolved: dict[str, Any] = {}
        for key in given:
            self.option_spec(key)
        for spec in self.options:
            resolved[spec.name] = spec.check(given[spec.name]) if spec.name in given else spec.default
        self.check_options(resolved)
        return resolved

    def parse_options(self, pairs: Iterable[str]) -> dict[str, Any]:
        """Parse `key=value` strings (the CLI's `--rule`) into checked option values."""
        parsed: dict[str, Any] = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            if not sep:
                raise BadOption(f"rule {pair!r} is not of the form key=value")
            parsed[key.strip()] = self.option_spec(key.strip()).parse(text)
        return parsed

    def check_options(self, options: dict[str, Any]) -> None:
        """Hook for checks across options; raise BadOption when they do not fit together."""

    def check_players(self, players: int) -> None:
        """Raise BadPlayerCount unless the game seats that many players."""
        if isinstance(players, bool) or not isinstance(players, int) or not (
            self.min_players <= players <= self.max_players
        ):
            raise BadPlayerCount(
                f"{self.name} seats {self.min_players} to {self.max_players} players, not {players!r}"
            )

    def new_game(
        self, players: int, options: Mapping[str, Any] | None = None, seed: int = 0
    ) -> State:
        """A new game in its initial state, dealt from `seed`."""
        self.check_players(players)
        resolved = self.resolve_options(options)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise GameError(f"seed must be an integer, not {seed!r}")
        return self._new_state(players, resolved, seed)

    @abstractmethod
    def _new_state(self, players: int, options: dict[str, Any], seed: int) -> State:
        """Build the initial state from checked arguments."""

    def replay(
        self,
        players: int,
        options: Mapping[str, Any] | None,
        seed: int,
        actions: Sequence[Action],
    ) -> State:
        """Re-play a game from its seed and the list of actions taken (in order)."""
        state = self.new_game(players, options, seed)
        for action in actions:
            state.apply(action)
        return state

    def replay_tables(self) -> ReplayTables | None:
        """How the site's replay viewer tabulates this game (engine/replay_tables.py); None: no viewer."""
        return None

    def describe(self) -> dict[str, Any]:
        """A JSON-able description of the game (for `arena games --json`)."""
        return {
            "name": self.name,
            "title": self.title,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "options": [spec.describe() for spec in self.options],
        }


@dataclass
class State(ABC):
    """One game in progress. Seats are numbered 0 .. players-1."""

    players: int
    options: dict[str, Any]
    seed: int
    history: list[tuple[int, Action]] = field(default_factory=list, init=False)

    @property
    @abstractmethod
    def current_player(self) -> int | None:
        """The seat whose decision it is, or None when the game is over."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """The legal actions of the current player, in a stable order ([] when over)."""

    @abstractmethod
    def observation(self, seat: int) -> Observation:
        """What `seat` may know now, and nothing more.

        Read-only, like the events: parts of it (a card's face) may be shared with the state
        or with other observations; copy before changing anything.
        """

    @abstractmethod
    def spectator_view(self) -> Observation:
        """Everything, hidden cards included: for replays after the game, never for bots."""

    @abstractmethod
    def events(self, seat: int | None = None) -> list[Event]:
        """The event log as `seat` saw it (its own private details included); None = public."""

    def events_since(self, seat: int | None, start: int) -> list[Event]:
        """`events(seat)[start:]`: what `seat` saw after its first `start` events.

        The referee's feed before every decision; a game that keeps its rendering answers
        without copying the whole log each time.
        """
        return self.events(seat)[start:]

    @abstractmethod
    def full_events(self) -> list[Event]:
        """Every event so far with every hidden detail shown (all private details, whoever owns them).

        For replays after the game (the site's replay viewer, golden replays), never for
        bots: the referee gives a bot only `events(seat)`.
        """

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Carry out an action already known to be legal."""

    @property
    @abstractmethod
    def is_over(self) -> bool:
        """True once the game has ended."""

    @abstractmethod
    def places(self) -> list[int]:
        """Final place of each seat, 1 = best, ties share a place (only when over)."""

    @abstractmethod
    def scores(self) -> list[float]:
        """Final score of each seat (meaning per game; documented in its rules doc)."""

    def apply(self, action: Action) -> None:
        """Apply the current player's action; IllegalAction (state unchanged) if not legal now."""
        if self.is_over:
            raise IllegalAction("the game is over; no action is legal")
        legal = self.legal_actions()
        if action not in legal:
            shown = ", ".join(json.dumps(a, sort_keys=True) for a in legal[:12])
            more = f" (and {len(legal) - 12} more)" if len(legal) > 12 else ""
            raise IllegalAction(
                f"{json.dumps(action, sort_keys=True)} is not legal for seat "
                f"{self.current_player} now; legal: {shown}{more}"
            )
        seat = self.current_player
        self._apply(action)
        self.history.append((seat, action))

    def apply_index(self, index: int) -> None:
        """Apply the legal action at `index` of `legal_actions()`."""
        legal = self.legal_actions()
        if not 0 <= index < len(legal):
            raise IllegalAction(
                f"action index {index} is out of range; {len(legal)} legal actions (0..{len(legal) - 1})"
            )
        self.apply(legal[index])

    @property
    def actions(self) -> list[Action]:
        """The actions taken so far, in order (with the seed, enough to replay)."""
        return [action for _, action in self.history]
