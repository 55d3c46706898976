"""A league's members: who plays, taken from the registry as it changes.

`registry_field(registry, game)` is the version of each bot in the registry that a league
of `game` plays (the newest submission). `Membership`, part of the league's runner
(`arena.league.ladder._League`), takes in what changed (`look`): a new bot or version joins
from the next batch to be scheduled, a replaced version retires, a bot gone from the
registry is removed and its games not yet started are dropped; a bot whose folder cannot
be played from (`unpreparable`) is suspended. Each change is a `members` row of the
store, with the batch it counts from, and a line for the league's display.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena.botcopy import vet_bot_folder
from arena.config.botfolder import BotFolderError, load_bot, shown_path
from arena.config.field import BotRef
from arena.faults import BotFault
from arena.langs.build import BuildFailed, run_build
from arena.play.executor import load_spec
from arena.registry.submit import RegistryEntry, list_registry, playable_problem
from arena.store.db import MemberRow
from arena.store.keys import ScheduledGame


def registry_field(
    registry: Path, game: str, broken: list[BotFolderError] | None = None
) -> dict[str, RegistryEntry]:
    """Per bot name, the version of it in the registry that the league plays: the newest
    submission (by date, then version) of each bot whose bot.toml lists `game`; folders
    whose bot.toml is wrong go to `broken`."""
    if not registry.is_dir():
        return {}
    current: dict[str, RegistryEntry] = {}
    for entry in list_registry(registry, broken):
        if game not in entry.games:
            continue
        best = current.get(entry.name)
        if best is None or (entry.date, entry.version) > (best.date, best.version):
            current[entry.name] = entry
    return current


def ref_of(bot_id: str, entry_folder: Path, content: str) -> BotRef:
    """The BotRef of a registry folder (BotFolderError if its bot.toml is wrong)."""
    manifest = load_bot(entry_folder)
    return BotRef(
        id=bot_id, name=manifest.name, version=manifest.version, folder=str(entry_folder),
        command=manifest.command, dockerfile=manifest.dockerfile, language=manifest.language,
        build=manifest.build, content_hash=content,
    )


class Membership:
    """The league runner's members (see the module docstring); the runner holds `members`,
    `refs`, `hashes`, `queue`, `next_batch`, `registry`, `config`, `store`, `lag`, `full`,
    `unprepared`, `folder_limits`, and schedules and drops games (`drop`)."""

    def look(self) -> None:
        """Take in what changed in the registry: from batch `next_batch`, new bots and
        versions play, replaced versions retire, vanished bots stop."""
        at = self.next_batch
        broken: list[BotFolderError] = []
        current = registry_field(self.registry, self.config.game, broken)
        self._say_broken(broken)
        by_lineage = {m.lineage: m for m in self.members.values() if m.status in ("active", "suspended")}
        for name, entry in sorted(current.items()):
            member = by_lineage.get(name)
            if member is not None and self.hashes.get(member.bot) == entry.content_hash:
                continue
            bot_id = f"{entry.name}@{entry.version}"
            if bot_id in self.hashes and self.hashes[bot_id] != entry.content_hash:
                bot_id = f"{bot_id}~{entry.content_hash[:8]}"  # the same version with other content
            try:
                ref = ref_of(bot_id, entry.folder, entry.content_hash)
            except BotFolderError:
                continue  # half-written or broken: looked at again next time
            if member is not None:
                before = f"{member.reason}; " if member.status == "suspended" else ""
                self._leave(member.bot, "retired", at, f"{before}replaced by {bot_id}")
            self._join(ref, entry.name, at)
        for name, member in sorted(by_lineage.items()):
            ref = self.refs.get(member.bot)
            if name not in current and (ref is None or ref.kind == "folder"):
                self._leave(member.bot, "removed", at, "no longer in the registry")
                self.drop([game for game in self.queue if member.bot in game.table])

    def _say_broken(self, broken: list[BotFolderError]) -> None:
        """Say once each bot folder of the registry that cannot join (its bot.toml is
        wrong, or its name is not UTF-8)."""
        for error in broken:
            said = (shown_path(error.folder), tuple(error.mistakes))
            if said in self.broken_said:
                continue
            self.broken_said.add(said)
            line = f"{shown_path(error.folder)} cannot join, {error.why()}"
            if self.notice is not None:
                self.notice(line)
            else:
                self._say(line)

    def drop(self, games: Sequence[ScheduledGame]) -> None:
        """Unschedule games that cannot be played (a bot of theirs left the registry)."""
        if not games:
            return
        self.store.drop_scheduled(game.key for game in games)
        keys = {game.key for game in games}
        self.queue = [game for game in self.queue if game.key not in keys]
        for game in games:
            self._count(game.table, -1)
            self.open[game.round] -= 1
            if self.open[game.round] == 0:
                del self.open[game.round]
                self.batch_done(game.round)
        self._say(f"{len(games)} scheduled games dropped: " + ", ".join(sorted(keys)))

    def _drop_unplayable(self) -> None:
        """Drop the scheduled games that no bot of theirs can be seated for (a resume: a
        bot removed, or its folder gone, after they were scheduled; a run stopped between
        a bot's removal and the drop of its games left them)."""
        self.drop([game for game in self.queue if any(bot not in self.refs for bot in game.table)])

    def _join(self, ref: BotRef, lineage: str, at: int) -> None:
        again = ref.id in self.members
        self.refs[ref.id] = ref
        self.hashes[ref.id] = ref.content_hash
        self.store.add_member(ref.record(), lineage, at)
        self.members[ref.id] = MemberRow(ref.id, lineage, at, None, "active")
        if self.config.inherit_rating:  # its first game starts from its predecessor's mu
            self.lag.ratings.inherit[ref.id] = self.full.ratings.inherit[ref.id] = lineage
        self._say(f"{ref.id} joins" + (" again" if again else ""))
        self._prepare(ref)

    def _leave(self, bot: str, status: str, at: int, reason: str) -> None:
        old = self.members[bot]
        at = old.left_at if old.left_at is not None else at  # a suspended bot stopped playing then
        self.store.set_member(bot, status, at, reason)
        self.members[bot] = MemberRow(bot, old.lineage, old.joined, at, status, reason)
        self._say(f"{bot} {status}: {reason}")

    def join_in_process(self) -> None:
        """In-process bots (tests, benchmarks) are members from the first batch on."""
        for name in self.in_process:
            if name not in self.members:
                ref = BotRef(id=name, name=name, version="in-process", folder="", content_hash="", kind="in-process")
                self._join(ref, name, self.next_batch)

    def _prepare(self, ref: BotRef) -> None:
        """Check that the bot's folder can be played from, run its build step when build/
        holds no build of its sources made here, check what the build made, build a Docker
        bot's image once, before its first game, and ship it to the cluster; a bot that
        cannot be prepared is suspended with the reason, and the league goes on without
        it. A bot `arena submit` put in was prepared so at validation: built there, it is
        not built again (arena.langs.built)."""
        if ref.kind != "folder":
            return
        problem = self._unpreparable(ref, sources_only=True)
        if problem is None and self.cluster is None and self.box is not None:
            # As `arena run` does: build/ made when it holds no build of these sources (one
            # copied in by hand may not); on a cluster each worker builds the bots it
            # receives without a build (arena.play.cluster).
            try:
                run_build(load_spec(ref), self.box)
            except BuildFailed as failed:
                problem = f"its build failed: {failed.line}"
        if problem is None:
            problem = self._unpreparable(ref)  # what the build made too
        if problem is None and self.cluster is not None:
            self.cluster.ship([ref])
        elif problem is None and self.config.sandbox == "docker" and ref.dockerfile and self.box is not None:
            try:
                self.box.image_for(load_spec(ref))
            except BotFault as fault:
                problem = f"its Docker image cannot be built: {fault.detail}"
        if problem is not None:
            self._suspend_unprepared(ref.id, problem)

    def _unpreparable(self, ref: BotRef, sources_only: bool = False) -> str | None:
        """Why no game can start the bot from its folder (None: nothing is wrong with it):
        arena.registry.submit.playable_problem, the check validation makes too; with
        `sources_only`, build/ of a bot with a build step left out (it is checked after
        the build)."""
        folder = Path(ref.folder)
        if sources_only and ref.build and folder.is_dir():
            problems = vet_bot_folder(folder, self.folder_limits, leave_out_build=True)
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"its folder cannot be played from: {problems[0]}{more}" if problems else None
        return playable_problem(folder, docker=self.config.sandbox == "docker", dockerfile=bool(ref.dockerfile),
                                folder_limits=self.folder_limits)

    def _suspend_unprepared(self, bot: str, reason: str) -> None:
        """Suspend a bot that cannot be prepared (from the next batch) and drop its games
        not yet started."""
        self.unprepared.add(bot)
        if self.members[bot].status == "active":
            self._leave(bot, "suspended", self.next_batch, reason)
        self.drop([game for game in self.queue if bot in game.table])

    def _failed_for_a_bot(self, game: ScheduledGame) -> bool:
        """A game that failed with arena's error: True (and its bots that cannot be prepared
        suspended) when the failure was a bot folder's, not arena's own."""
        bad = False
        for bot in game.table:
            ref = self.refs.get(bot)
            if ref is None or ref.kind != "folder":
                continue
            if bot in self.unprepared:
                bad = True
                continue
            problem = self._unpreparable(ref)
            if problem is not None:
                self._suspend_unprepared(bot, problem)
                bad = True
        return bad
