"""The local sandbox and the helpers both sandboxes share (line caps, stderr log, time bank)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox import BotSpec, Limits, UnknownSandbox, get_sandbox
from arena.sandbox.cgroups import PREFIX, BotCgroup, remove_leftovers
from arena.sandbox.common import LineBuffer, StderrLog, TimeBank, fault_for_exit
from arena.sandbox.local import COVER, WARNING, LocalSandbox, mount_steps, unshare_works
from tests.sandbox_helpers import crashes_at_once

# As root the bots run as user nobody, who cannot reach a Python under /root (pyenv's).
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") if os.geteuid() == 0 else sys.executable
LIMITS = Limits(startup_s=5, decision_s=0.5, time_bank_s=0.5, memory_mb=64, pids=16, cpu_s=30,
                file_size_mb=1, stderr_keep_bytes=1000)


# -- shared helpers ---------------------------------------------------------------------


def test_lines_are_split_across_chunks_and_crlf_is_accepted():
    buffer = LineBuffer(100, 1000)
    buffer.feed(b'{"a"')
    assert buffer.next_line() is None
    buffer.feed(b":1}\r\nsecond\nthi")
    assert [buffer.next_line(), buffer.next_line(), buffer.next_line()] == [b'{"a":1}', b"second", None]
    buffer.feed(b"rd\n")
    assert buffer.next_line() == b"third"


def test_an_unfinished_line_over_the_cap_is_an_output_limit_at_once():
    buffer = LineBuffer(10, 1000)
    buffer.feed(b"0123456789")
    with pytest.raises(BotFault) as caught:
        buffer.feed(b"x")
    assert caught.value.reason is Reason.OUTPUT_LIMIT and "longer than 10 bytes" in caught.value.detail


def test_a_finished_line_over_the_cap_is_an_output_limit():
    with pytest.raises(BotFault, match="longer than 4 bytes"):
        LineBuffer(4, 1000).feed(b"12345\n")


def test_bytes_per_decision_are_capped_and_restart_with_each_message():
    buffer = LineBuffer(100, 20)
    buffer.feed(b"a" * 9 + b"\n" + b"b" * 9 + b"\n")
    buffer.start_decision()
    buffer.feed(b"c" * 20)
    with pytest.raises(BotFault, match="more than 20 bytes while one answer was awaited"):
        buffer.feed(b"\n")


def test_the_stderr_log_keeps_its_first_and_last_bytes():
    log = StderrLog(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstu"):
        log.append(chunk)
    assert log.text() == "abcde\n[... 11 bytes of log dropped ...]\nqrstu"
    assert log.dropped == 11


def test_the_time_bank_pays_overruns_only():
    bank = TimeBank(decision_s=1.0, bank_s=2.0)
    assert bank.allowance() == 3.0
    bank.charge(0.4)
    assert bank.remaining_s == 2.0
    bank.charge(2.5)
    assert bank.remaining_s == pytest.approx(0.5) and bank.allowance() == pytest.approx(1.5)
    bank.charge(9)
    assert bank.remaining_s == 0 and bank.allowance() == 1.0


def test_exit_words():
    assert fault_for_exit(3, LIMITS).detail == "exited with code 3"
    assert fault_for_exit(-signal.SIGSEGV, LIMITS).detail == "was killed by signal SIGSEGV"
    assert fault_for_exit(-signal.SIGXCPU, LIMITS).reason is Reason.TIMEOUT
    assert fault_for_exit(-9, LIMITS, oom=True).reason is Reason.OUT_OF_MEMORY


def test_sandboxes_by_name():
    assert get_sandbox("local", warn=False).name == "local"
    with pytest.raises(UnknownSandbox, match="unknown sandbox 'vm'; known sandboxes: local, docker"):
        get_sandbox("vm")


# -- the local sandbox ------------------------------------------------------------------


@pytest.fixture
def sandbox():
    return LocalSandbox(warn=False)


@pytest.fixture
def open_tmp(tmp_path):
    """A scratch folder user nobody can reach (pytest's own sits in a folder of mode 700)."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="arena-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def bot(tmp_path: Path, code: str, name: str = "probe") -> BotSpec:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(code)
    return BotSpec(name=name, folder=folder, command=(PYTHON, "bot.py"))


ECHO = """
import sys
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""


def test_lines_go_to_the_bot_and_come_back(tmp_path, sandbox):
    process = sandbox.start(bot(tmp_path, ECHO), LIMITS)
    try:
        for text in (b"one", b'{"type":"ready"}', "hé".encode()):
            process.send_line(text)
            assert process.receive_line(2) == text
        assert process.poll_line() is None
    finally:
        assert process.close() is None
    assert process.close() is None  # idempotent


def test_a_silent_bot_times_out_without_being_killed(tmp_path, sandbox):
    process = sandbox.start(bot(tmp_path, "import time\ntime.sleep(60)\n"), LIMITS)
    try:
        started = time.monotonic()
        with pytest.raises(BotFault) as caught:
            process.receive_line(0.3)
        assert caught.value.reason is Reason.TIMEOUT
        assert 0.25 < time.monotonic() - started < 1.5
    finally:
        process.close()


def test_an_exit_is_a_crash_with_the_code_and_a_signal_by_name(tmp_path, sandbox):
    for code, words in (("raise SystemExit(7)", "exited with code 7"),
                        ("import os, signal\nos.kill(os.getpid(), signal.SIGABRT)", "was killed by signal SIGABRT")):
        process = sandbox.start(bot(tmp_path, f"import sys\nsys.stdin.readline()\n{code}\n", name=f"b{len(words)}"), LIMITS)
        try:
            process.send_line(b"go")
            with pytest.raises(BotFault) as caught:
                process.receive_line(3)
            assert (caught.value.reason, caught.value.detail) == (Reason.CRASH, words)
            with pytest.raises(BotFault):
                process.send_line(b"again")  # the same fault again, not a hang
        finally:
            process.close()


def test_a_missing_program_is_a_crash_with_code_127(tmp_path, sandbox):
    (tmp_path / "ghost").mkdir()
    spec = BotSpec(name="ghost", folder=tmp_path / "ghost", command=("no-such-program-anywhere",))
    process = sandbox.start(spec, LIMITS)
    try:
        with pytest.raises(BotFault) as caught:
            process.receive_line(3)
        assert caught.value.detail == "exited with code 127"
        assert "cannot run 'no-such-program-anywhere'" in process.stderr_text()
    finally:
        process.close()


def test_a_bot_that_never_reads_its_input_cannot_block_arena(tmp_path, sandbox):
    process = sandbox.start(bot(tmp_path, "import time\ntime.sleep(60)\n"), LIMITS)
    try:
        started = time.monotonic()
        with pytest.raises(BotFault) as caught:
            for _ in range(100):
                process.send_line(b"x" * 65536)
        assert caught.value.reason is Reason.TIMEOUT and "stopped reading" in caught.value.detail
        assert time.monotonic() - started < 3
    finally:
        process.close()


def test_the_cpu_budget_of_the_match_is_a_timeout(tmp_path, sandbox):
    limits = Limits(**{**LIMITS.__dict__, "cpu_s": 1})
    process = sandbox.start(bot(tmp_path, "while True:\n    pass\n"), limits)
    try:
        with pytest.raises(BotFault) as caught:
            process.receive_line(10)
        assert caught.value.reason is Reason.TIMEOUT and "CPU budget of 1 s" in caught.value.detail
    finally:
        process.close()


def test_writing_a_file_over_the_size_limit_kills_the_bot(tmp_path, sandbox):
    code = "import os, tempfile\nwith open(os.path.join(tempfile.gettempdir(), 'arena-fsize-%d' % os.getpid()), 'wb') as f:\n    f.write(b'x' * (3 << 20))\n"
    process = sandbox.start(bot(tmp_path, code), LIMITS)
    try:
        with pytest.raises(BotFault) as caught:
            process.receive_line(5)
        # Python ignores SIGXFSZ, so the write fails (EFBIG) and the bot dies of the error.
        assert caught.value.reason is Reason.CRASH and caught.value.detail == "exited with code 1"
        assert "File too large" in process.stderr_text()
    finally:
        process.close()
        for leftover in Path(os.environ.get("TMPDIR", "/tmp")).glob("arena-fsize-*"):
            leftover.unlink()


def test_the_log_is_drained_while_the_bot_floods_it(tmp_path, sandbox):
    code = "import sys\nsys.stderr.write('e' * (8 << 20))\nsys.stderr.flush()\nprint('done', flush=True)\nsys.stdin.readline()\n"
    process = sandbox.start(bot(tmp_path, code), LIMITS)
    try:
        assert process.receive_line(5) == b"done"
        time.sleep(0.05)
        text = process.stderr_text()
        assert text.startswith("e" * 500) and "bytes of log dropped" in text and len(text) < 1100
    finally:
        process.close()


def test_the_bot_runs_in_its_folder_with_a_small_environment(tmp_path, sandbox):
    code = "import os, json\nprint(json.dumps([os.getcwd(), sorted(os.environ)]), flush=True)\nimport sys\nsys.stdin.readline()\n"
    spec = bot(tmp_path, code)
    os.environ["ARENA_TEST_SECRET"] = "not for bots"
    try:
        process = sandbox.start(spec, LIMITS)
        import json

        cwd, names = json.loads(process.receive_line(5))
        assert cwd == str(spec.folder.resolve()) and "ARENA_TEST_SECRET" not in names and "PATH" in names
    finally:
        del os.environ["ARENA_TEST_SECRET"]
        process.close()


def test_the_warning_that_local_is_no_isolation_is_printed_once(tmp_path, capsys, monkeypatch):
    import arena.sandbox.local as local

    monkeypatch.setattr(local, "_warned", False)
    noisy = LocalSandbox()
    for name in ("w1", "w2"):
        noisy.start(bot(tmp_path, ECHO, name=name), LIMITS).close()
    assert " ".join(capsys.readouterr().err.split()).count(WARNING) == 1  # wrapped at 80 columns


def test_a_start_failure_of_arena_itself_is_a_sandbox_error(tmp_path):
    broken = LocalSandbox(warn=False, python=str(tmp_path / "no-python"))
    with pytest.raises(SandboxError, match="cannot start the local bot"):
        broken.start(bot(tmp_path, ECHO), LIMITS)


def test_leftover_cgroups_of_a_dead_run_are_removed():
    cgroup, notes = BotCgroup.create(LIMITS)
    if cgroup is None:
        pytest.skip(f"no writable cgroup here: {notes}")
    dead_owner = cgroup.dirs[0].parent / f"{PREFIX}999999999-1"  # no such pid
    cgroup.dirs[0].rename(dead_owner)
    cgroup.dirs[0] = dead_owner
    try:
        assert remove_leftovers() >= 1 and not dead_owner.exists()
    finally:
        cgroup.remove()


def test_what_this_machine_cannot_enforce_is_said_once(open_tmp, capsys, monkeypatch):
    import arena.sandbox.local as local

    monkeypatch.setattr(local, "_warned", True)
    monkeypatch.setattr(local, "_noted", set())
    monkeypatch.setattr(local, "unshare_works", lambda: False)
    plain = LocalSandbox(use_cgroup=False)
    for name in ("n1", "n2"):
        plain.start(bot(open_tmp, ECHO, name=name), LIMITS).close()
    err = capsys.readouterr().err
    assert err.count("arena: local sandbox: no namespaces (they need root)") == 1


# -- a bot that closes a pipe but runs on ------------------------------------------------


@pytest.fixture(params=[True, False], ids=["namespaces", "plain"])
def start_isolated(request, open_tmp):
    """Starts a bot from its code in the local sandbox, with namespaces and without; each
    process it started is closed at the end of the test."""
    if request.param and not unshare_works():
        pytest.skip("no namespaces here (they need root): only the plain path can be tested")
    sandbox = LocalSandbox(isolate=request.param, warn=False)
    started = []

    def start(code: str):
        started.append(sandbox.start(bot(open_tmp, code), LIMITS))
        return started[-1]

    yield start
    for process in started:
        process.close()


def test_closing_stdout_while_running_is_a_crash_at_once(start_isolated):
    process = start_isolated("import os, sys, time\nsys.stdin.readline()\nos.close(1)\ntime.sleep(60)\n")
    process.send_line(b"go")
    crashes_at_once(lambda: process.receive_line(5), "closed its stdout but kept running", within=1.0)


def test_closing_stdin_while_running_is_a_crash_at_once(start_isolated):
    process = start_isolated("import os, time\nos.close(0)\nprint('closed', flush=True)\ntime.sleep(60)\n")
    assert process.receive_line(5) == b"closed"
    crashes_at_once(lambda: process.send_line(b"are you there"), "closed its stdin but kept running", within=1.0)


def test_an_exit_is_told_apart_from_a_closed_pipe(start_isolated):
    process = start_isolated("import os, sys, time\nsys.stdin.readline()\ntime.sleep(0.3)\nos._exit(5)\n")
    process.send_line(b"go")
    with pytest.raises(BotFault) as caught:
        process.receive_line(5)
    assert (caught.value.reason, caught.value.detail) == (Reason.CRASH, "exited with code 5")


# -- what the init mounts ---------------------------------------------------------------


def test_only_the_outermost_of_nested_covers_is_mounted_and_the_own_folder_is_bound_back():
    folder = Path("/srv/registry/mine/1.0")
    steps = mount_steps(
        folder,
        covers=[Path("/srv/registry"), Path("/srv/registry/other/1.0"), Path("/srv/registry/mine"), folder,
                Path("/run"), Path("/")],
        scratch=[Path("/tmp"), Path("/dev/shm")],
        scratch_mb=16,
    )
    assert steps == [
        ["private"], ["readonly_all"], ["proc"],
        ["tmpfs", "/run", COVER, True],
        ["tmpfs", "/tmp", "size=16m,mode=1777", False],
        ["tmpfs", "/dev/shm", "size=16m,mode=1777", False],
        ["tmpfs", "/srv/registry", COVER, False], ["bind_folder"], ["readonly", "/srv/registry"],
    ]


def test_a_private_tmp_holding_the_bot_folder_stays_writable_and_a_path_inside_the_folder_is_covered_after_it():
    folder = Path("/tmp/run/bots/mine")
    steps = mount_steps(
        folder, covers=[folder.parent, folder / "out", Path("/tmp/run")], scratch=[Path("/tmp")], scratch_mb=1,
        files=[Path("/tmp/run/secret"), Path("/etc/arena.key")],
    )
    assert steps == [
        ["private"], ["readonly_all"], ["proc"],
        ["tmpfs", "/tmp", "size=1m,mode=1777", False], ["bind_folder"],
        ["tmpfs", "/tmp/run/bots/mine/out", COVER, True],
        ["null", "/etc/arena.key"],
    ]


# -- as root without namespaces ---------------------------------------------------------

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="only root's bots are made nobody; not root here")


@root_only
def test_without_namespaces_root_still_runs_bots_as_nobody(open_tmp, monkeypatch):
    import arena.sandbox.local as local

    monkeypatch.setattr(local, "unshare_works", lambda: False)
    code = "import os, sys\nprint(os.getuid(), os.getgid(), os.getgroups(), flush=True)\nsys.stdin.readline()\n"
    process = LocalSandbox(warn=False).start(bot(open_tmp, code), LIMITS)
    try:
        assert process.receive_line(5) == b"65534 65534 []"
    finally:
        process.close()


@root_only
def test_without_namespaces_a_bot_folder_nobody_cannot_reach_is_refused(open_tmp, monkeypatch):
    import arena.sandbox.local as local

    monkeypatch.setattr(local, "unshare_works", lambda: False)
    closed = open_tmp / "closed"
    closed.mkdir(mode=0o700)
    spec = bot(closed, ECHO)
    with pytest.raises(SandboxError) as caught:
        LocalSandbox(warn=False).start(spec, LIMITS)
    assert str(caught.value) == (
        f"the bot folder {spec.folder} cannot be reached by user nobody (uid 65534), who runs the bots "
        f"when arena runs as root: {closed} is closed to others, and without namespaces "
        "it cannot be covered; move the bot folder elsewhere"
    )


@root_only
def test_a_bot_file_nobody_cannot_read_is_refused_with_what_to_chmod(open_tmp):
    spec = bot(open_tmp, ECHO)
    (spec.folder / "bot.py").chmod(0o600)
    with pytest.raises(SandboxError) as caught:
        LocalSandbox(warn=False).start(spec, LIMITS)
    assert str(caught.value) == (
        f"{spec.folder / 'bot.py'} is not readable by user nobody (uid 65534), who runs the bots when arena "
        f"runs as root; make the bot folder readable by everyone: chmod -R a+rX {spec.folder}"
    )
