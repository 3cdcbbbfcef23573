"""Tests for omen_replay.copy and ``omen copy`` / ``omen db init``: fights moved between stores byte for byte, a
differing fight refused, a copy cut short resumed; PostgreSQL among the stores where a server is given."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner, Result

from omen_cli import app
from omen_core.errors import ConcurrencyError
from omen_core.events import GENESIS_HASH, encode_line
from omen_core.store import JsonlStore, SqliteStore, open_store
from omen_core.store.postgres import SCHEMA_VERSION, PostgresStore
from omen_replay import copy as copying
from omen_replay.verify import verify_lines
from tests.fights import TURNS_BEFORE_C36, TURNS_BEFORE_C36_V1, unsound_turns
from tests.postgres import Postgres
from tests.store.conftest import continue_from, make_events

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EMBER = FIXTURES / "ember-ford" / "fight.jsonl"


def omen(*args: str) -> Result:
    """Run the CLI in-process and return the result."""
    return runner.invoke(app, list(args))


def ember(tmp_path: Path) -> Path:
    """A copy of the Ember Ford fight's recorded log (319 events, an undo among them)."""
    path = tmp_path / "ember-ford.jsonl"
    shutil.copyfile(EMBER, path)
    return path


class TestCopy:
    def test_jsonl_to_postgres_and_back_is_byte_identical(self, tmp_path: Path, postgres: Postgres) -> None:
        """The recorded Ember Ford log copied into PostgreSQL and back out into a new JSON Lines file is the same
        file, byte for byte; the database's rows are its lines."""
        url = postgres.fresh_url()
        source = ember(tmp_path)
        there = omen("copy", str(source), url)
        assert there.exit_code == 0, there.output
        assert "ember-ford: 319 events copied" in there.output
        with psycopg.connect(url, autocommit=True) as conn:
            rows = [bytes(line) for (line,) in conn.execute("SELECT line FROM events ORDER BY seq")]
        assert b"".join(line + b"\n" for line in rows) == source.read_bytes()
        back = tmp_path / "back" / "ember-ford.jsonl"
        back.parent.mkdir()
        result = omen("copy", url, str(back))
        assert result.exit_code == 0, result.output
        assert back.read_bytes() == source.read_bytes()
        assert omen("verify", url).exit_code == 0

    def test_every_fixture_into_a_directory_and_sqlite(self, tmp_path: Path) -> None:
        """Every golden fixture's log copied into a directory of logs and from there into SQLite reads back line for
        line; the directory's files are the fixtures' files."""
        logs = sorted(FIXTURES.glob("*/fight.jsonl"))
        assert len(logs) >= 10
        for log in logs:
            result = omen("copy", str(log), f"{tmp_path}/all/")
            assert result.exit_code == 0, result.output
        db = f"sqlite:///{tmp_path / 'all.db'}"
        assert omen("copy", f"{tmp_path}/all/", db).exit_code == 0
        store = SqliteStore(tmp_path / "all.db")
        try:
            for log in logs:
                fight_id = JsonlStore.single(log).fights()[0]
                assert (tmp_path / "all" / f"{fight_id}.jsonl").read_bytes() == log.read_bytes()
                lines = b"".join(line + b"\n" for chunk in store.read_lines(fight_id) for line in chunk)
                assert lines == log.read_bytes()
        finally:
            store.close()

    @pytest.mark.parametrize("version", sorted(p.name for p in (FIXTURES / "formats").iterdir()))
    def test_a_log_of_an_older_schema_version_is_copied_as_it_is(self, tmp_path: Path, version: str) -> None:
        """A log written by an older omen (each kept under fixtures/formats: versions 1 to 4, whose lines today's
        omen would write otherwise) copied into SQLite and back out is its own file, byte for byte: the lines are
        copied as stored, their chain checked on their own bytes."""
        log = FIXTURES / "formats" / version / "fight.jsonl"
        db = f"sqlite:///{tmp_path / 'old.db'}"
        there = omen("copy", str(log), db)
        assert there.exit_code == 0, there.output
        back = tmp_path / "back.jsonl"
        result = omen("copy", db, str(back))
        assert result.exit_code == 0, result.output
        assert back.read_bytes() == log.read_bytes()
        report = verify_lines(back.read_bytes().splitlines(keepends=True))
        before_c36 = {"v1-ember-ford": TURNS_BEFORE_C36_V1, "v3-ember-ford": TURNS_BEFORE_C36,
                      "v4-ember-ford": TURNS_BEFORE_C36}  # those three were recorded before C36
        assert unsound_turns(report.problems) == before_c36.get(version, ())

    def test_an_identical_fight_is_left_alone(self, tmp_path: Path) -> None:
        """Copying a fight the destination already holds whole writes nothing and says so (exit 0)."""
        source = ember(tmp_path)
        dst = tmp_path / "dst.jsonl"
        assert omen("copy", str(source), str(dst)).exit_code == 0
        before = dst.stat().st_mtime_ns, dst.read_bytes()
        again = omen("copy", str(source), str(dst))
        assert again.exit_code == 0 and "already in" in again.output and "identical (319 events)" in again.output
        assert (dst.stat().st_mtime_ns, dst.read_bytes()) == before

    def test_a_prefix_is_resumed(self, tmp_path: Path) -> None:
        """A destination holding the first events of the fight (a copy cut short) gets the rest, and is then the
        source's file."""
        source = ember(tmp_path)
        dst = tmp_path / "dst.jsonl"
        lines = source.read_bytes().splitlines(keepends=True)
        dst.write_bytes(b"".join(lines[:120]))
        result = omen("copy", str(source), str(dst))
        assert result.exit_code == 0, result.output
        assert "199 events copied after the 120 already there (seqs 121-319)" in result.output
        assert dst.read_bytes() == source.read_bytes()

    @pytest.mark.parametrize("change", ["a changed line", "a longer fight"])
    def test_a_differing_fight_is_refused_untouched(self, tmp_path: Path, change: str) -> None:
        """A destination whose fight differs from the source's (another event at seq 41, then fewer events than the
        source has, or more) is refused, exit 2, naming the seq where the two part and both counts; neither store
        changes."""
        source = ember(tmp_path)
        dst = tmp_path / "dst.jsonl"
        lines = source.read_bytes().splitlines(keepends=True)
        dst.write_bytes(b"".join(lines[:40]))
        store = JsonlStore.single(dst)
        more = 3 if change == "a changed line" else 300
        store.append("ember-ford", continue_from(list(store.read("ember-ford")), "ember-ford", more), 40)
        before = dst.read_bytes()
        result = omen("copy", str(source), str(dst))
        assert result.exit_code == 2
        words = " ".join(result.output.split())
        assert "differs from the source" in words and "nothing was copied" in words
        assert (f"the two part at seq 41 (it holds {40 + more} events, the source 319; the first 40 are the same)"
                in words), words
        assert dst.read_bytes() == before and source.read_bytes() == EMBER.read_bytes()

    @pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
    def test_a_destination_holding_the_source_and_more_already_holds_it(self, tmp_path: Path, kind: str) -> None:
        """Copying the first 119 events of a fight (whole commands) into a store holding all 319 of it says it is
        already there, and more (exit 0, nothing written), as for a fight held identically; it said the two
        "differ", like a forgery."""
        source = tmp_path / "prefix.jsonl"
        source.write_bytes(b"".join(EMBER.read_bytes().splitlines(keepends=True)[:119]))
        dst = str(tmp_path / "dst.jsonl") if kind == "jsonl" else f"sqlite:///{tmp_path / 'dst.db'}"
        assert omen("copy", str(EMBER), dst).exit_code == 0
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("dst")}
        result = omen("copy", str(source), dst)
        assert result.exit_code == 0, result.output
        assert (f"ember-ford: already in {dst}, and more: it holds the source's 119 events then 200 more (319 in "
                "all); nothing copied") in " ".join(result.output.split())
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("dst")} == before

    @pytest.mark.parametrize("kind", ["directory", "sqlite", "postgresql"])
    def test_a_torn_batch_is_not_copied(self, tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
        """A log cut mid-command (the batch from seq 19 holds 16 events; the log stops 2 into it) is refused,
        exit 2, at its last line (where replay places it: it said line 19, replay 20, a maintainer tester), naming
        the fight and the seq the torn batch starts at and saying to repair the source; nothing is
        written (a database would have held part of a command, which omen repair cannot remove there)."""
        source = tmp_path / "torn.jsonl"
        source.write_bytes(b"".join(EMBER.read_bytes().splitlines(keepends=True)[:20]))
        if kind == "postgresql":
            dst = request.getfixturevalue("postgres").fresh_url()
        else:
            dst = str(tmp_path / "dst") + "/" if kind == "directory" else f"sqlite:///{tmp_path / 'dst.db'}"
        result = omen("copy", str(source), dst)
        assert result.exit_code == 2 and result.stdout == ""
        assert " ".join(result.stderr.split()) == (
            f"omen: error: {source}:20: fight 'ember-ford' ends with a torn batch: the command starting at seq 19 "
            "wrote 2 of its 16 events (a crash mid-write); a copy appends whole commands only, so nothing was "
            f"copied: run omen repair {source} first")
        if kind != "postgresql":  # no database file left behind either (found by a tester: an empty one was)
            assert not (tmp_path / "dst").exists() and not (tmp_path / "dst.db").exists()
        assert omen("repair", str(source)).exit_code == 0
        assert "18 events copied" in omen("copy", str(source), dst).output

    def test_to_copies_the_whole_commands_before_a_database_torn_batch(self, tmp_path: Path) -> None:
        """A SQLite fight whose last row was deleted outside omen (found by a forging tester: every command said
        "a crash mid-write; omen repair removes it", and omen repair refuses SQLite): verify, status and copy say the
        rows were removed or edited outside omen and how to copy out the whole commands before it; repair's refusal
        says so too; copy --to 18 does it (a fight that verifies), --to inside the torn batch or past the end is
        refused naming --to, exit 2."""
        import sqlite3

        db = tmp_path / "torn.db"
        url = f"sqlite:///{db}"
        source = tmp_path / "whole.jsonl"
        source.write_bytes(b"".join(EMBER.read_bytes().splitlines(keepends=True)[:34]))  # to the batch of seq 19's end
        assert omen("copy", str(source), url).exit_code == 0
        with sqlite3.connect(db) as c:
            c.execute("DELETE FROM events WHERE seq > 20")
        c.close()
        told = ("torn batch: the command starting at seq 19 wrote 2 of its 16 events: this store writes each "
                "command's events in one transaction, so no crash leaves part of one: its rows were removed or edited "
                "outside omen (omen repair is for JSON Lines logs); copy the whole commands before it to another "
                "store (omen copy SRC DST --fight ember-ford --to 18) or restore this store from a backup")
        verified = omen("verify", url)
        assert verified.exit_code == 1 and f"seq 20, line 20 [batch] {told}" in " ".join(verified.stdout.split())
        status = omen("status", url)
        assert status.exit_code == 2 and " ".join(status.stderr.split()) == f"omen: error: {db}:20: {told}"
        copied = omen("copy", url, str(tmp_path / "out.jsonl"))
        assert copied.exit_code == 2 and " ".join(copied.stderr.split()) == (
            f"omen: error: {db}:19: fight 'ember-ford' ends with a {told}; a copy appends whole commands only, so "
            "nothing was copied")
        repaired = omen("repair", url)
        assert repaired.exit_code == 2 and "a torn batch in it means rows were removed or edited outside omen" \
            in " ".join(repaired.stderr.split())
        inside = omen("copy", url, str(tmp_path / "out.jsonl"), "--to", "19")
        assert " ".join(inside.stderr.split()) == ("omen: error: --to 19: seq 19 is inside the command of seqs 19 "
                                                   "to 34 of fight 'ember-ford': give the seq a command ends at (18, "
                                                   "the one before it)")
        past = omen("copy", url, str(tmp_path / "out.jsonl"), "--to", "40")
        assert " ".join(past.stderr.split()) == f"omen: error: --to 40: fight 'ember-ford' in {db} holds 20 events"
        assert (inside.exit_code, past.exit_code) == (2, 2) and not (tmp_path / "out.jsonl").exists()
        done = omen("copy", url, str(tmp_path / "out.jsonl"), "--to", "18")
        assert done.exit_code == 0 and done.stdout.strip() == "ember-ford: 18 events copied"
        assert omen("verify", str(tmp_path / "out.jsonl")).exit_code == 0

    def test_to_copies_the_whole_commands_before_rows_missing_in_the_middle(self, tmp_path: Path) -> None:
        """A SQLite fight with a row deleted in its middle (seq 20 of 34; found by a tester: every reader said only
        "rows missing", and copy --to before the gap read on into it and refused): status says the rows were removed
        or edited outside omen and how to copy out what comes before; copy --to 18 (a command's end before the gap)
        copies a fight that verifies."""
        import sqlite3

        db = tmp_path / "gap.db"
        url = f"sqlite:///{db}"
        source = tmp_path / "whole.jsonl"
        source.write_bytes(b"".join(EMBER.read_bytes().splitlines(keepends=True)[:34]))
        assert omen("copy", str(source), url).exit_code == 0
        with sqlite3.connect(db) as c:
            c.execute("DELETE FROM events WHERE seq = 20")
        c.close()
        status = omen("status", url)
        assert status.exit_code == 2 and " ".join(status.stderr.split()) == (
            f"omen: error: {db}:21: seq 21 where 20 was expected (rows missing: removed or edited outside omen, not "
            "by a crash; copy the whole commands before the gap to another store (omen copy SRC DST --fight ID --to "
            "SEQ, SEQ the last seq of a command before it) or restore this store from a backup)")
        done = omen("copy", url, str(tmp_path / "out.jsonl"), "--to", "18")
        assert done.exit_code == 0 and done.stdout.strip() == "ember-ford: 18 events copied", done.output
        assert omen("verify", str(tmp_path / "out.jsonl")).exit_code == 0

    def test_to_copies_one_fight(self, tmp_path: Path) -> None:
        """--to names a seq of one fight: with a source of several and no --fight it is refused, exit 2."""
        folder = tmp_path / "fights"
        folder.mkdir()
        for name in ("a", "b"):
            (folder / f"{name}.jsonl").write_bytes(EMBER.read_bytes().replace(b'"ember-ford"', f'"{name}"'.encode()))
        result = omen("copy", f"{folder}/", str(tmp_path / "out.jsonl"), "--to", "18")
        assert result.exit_code == 2 and " ".join(result.stderr.split()) == (
            f"omen: error: --to copies one fight: {folder}/ holds 2; choose one with --fight")

    def test_a_broken_chain_is_not_copied(self, tmp_path: Path) -> None:
        """A source whose chain does not hold (an event's face changed by hand) is refused, exit 2, naming the seq,
        and nothing reaches the destination."""
        source = tmp_path / "bad.jsonl"
        lines = EMBER.read_bytes().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if b'"face":3' in line)
        lines[at] = lines[at].replace(b'"face":3', b'"face":4', 1)
        source.write_bytes(b"".join(lines))
        result = omen("copy", str(source), f"sqlite:///{tmp_path / 'x.db'}")
        assert result.exit_code == 2
        words = "".join(result.output.split())
        assert f"bad.jsonl:{at + 1}:" in words and "thechaindoesnothold" in words
        assert not (tmp_path / "x.db").exists()

    def test_a_torn_last_line_says_which_command_and_how_to_repair(self, tmp_path: Path) -> None:
        """A source whose last line a crash cut off is refused, exit 2, naming the torn line, the command it cuts
        short, the fight, and `omen repair` on the file (it said only "torn tail ... earlier events are intact";
        found by a tester); do, replay and undo say it in the same words."""
        torn = tmp_path / "torn.jsonl"
        torn.write_bytes(EMBER.read_bytes()[:-20])
        told = (f"omen: error: {torn}:319: torn tail: the last line ({len(EMBER.read_bytes().splitlines()[-1]) - 19} "
                "bytes) was cut off mid-write; earlier events are intact; the command starting at seq 318 of fight "
                f"'ember-ford' is cut short: run omen repair {torn} (it moves what the crash left to a side file)")
        for args in (["copy", str(torn), f"{tmp_path}/out/"], ["replay", str(torn)], ["undo", str(torn)],
                     ["do", str(torn), '{"command": "end_turn", "who": "vesh"}']):
            result = omen(*args)
            assert (result.exit_code, " ".join(result.stderr.split())) == (2, told), args

    def test_an_empty_line_is_said_as_every_reader_says_it(self, tmp_path: Path) -> None:
        """A source with an empty line (here after its last) is refused, exit 2, as "LOG:N: empty line", the words
        of every other reader (it said the decoder's "line does not decode as a stored event: Input data was
        truncated"); nothing is copied."""
        source = tmp_path / "blank.jsonl"
        source.write_bytes(EMBER.read_bytes() + b"\n")
        result = omen("copy", str(source), f"{tmp_path}/out/")
        assert (result.exit_code, " ".join(result.stderr.split())) == (2, f"omen: error: {source}:320: empty line")
        assert not (tmp_path / "out").exists()

    def test_a_refused_copy_leaves_no_new_database(self, tmp_path: Path) -> None:
        """A copy to a SQLite file not there yet that is refused (a torn source, --to past the end) leaves no file at
        all, exit 2 (found by a tester: it left an empty database, where a JSON Lines destination left nothing); a
        database that was there is left as it was."""
        torn = tmp_path / "torn.jsonl"
        torn.write_bytes(EMBER.read_bytes()[:-20])
        db = tmp_path / "new.db"
        assert omen("copy", str(torn), f"sqlite:///{db}").exit_code == 2
        past = omen("copy", str(EMBER), f"sqlite:///{db}", "--to", "400")
        assert past.exit_code == 2 and " ".join(past.stderr.split()) == (
            f"omen: error: --to 400: fight 'ember-ford' in {EMBER} holds 319 events")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["torn.jsonl"]
        assert omen("copy", str(EMBER), f"sqlite:///{db}", "--to", "18").exit_code == 0
        before = db.read_bytes()
        assert omen("copy", str(torn), f"sqlite:///{db}").exit_code == 2
        assert db.read_bytes() == before

    @pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
    def test_several_fights_into_one_file_are_refused_before_writing(self, tmp_path: Path, kind: str,
                                                                     request: pytest.FixtureRequest) -> None:
        """A store of three fights copied into one .jsonl file is refused before anything is written, exit 2,
        naming the fights and a directory to copy them into (found by a tester: the first fight was written, then
        the second refused with "nothing was written"); a file that holds one fight refuses another the same way;
        --fight copies one."""
        src = f"sqlite:///{tmp_path / 'three.db'}" if kind == "sqlite" else request.getfixturevalue(
            "postgres").fresh_url()
        folder = JsonlStore(tmp_path / "fights")
        for size, name in enumerate(("a", "b", "c"), 2):
            folder.append(name, make_events(name, size), 0)
        assert omen("copy", f"{tmp_path / 'fights'}/", src).exit_code == 0
        shown = open_store(src)
        where = shown.location
        getattr(shown, "close", lambda: None)()
        one = tmp_path / "one.jsonl"
        result = omen("copy", src, str(one))
        assert result.exit_code == 2 and result.stdout == ""
        assert " ".join(result.stderr.split()) == (
            f"omen: error: {one}: a single-file store keeps exactly one fight, and {where} holds 3 (a, b, c); "
            f"nothing was written: copy them into a directory ({tmp_path / 'one'}/: one <fight>.jsonl per fight) or "
            "a database, or one of them with --fight ID")
        assert not one.exists()
        assert omen("copy", src, str(one), "--fight", "b").exit_code == 0
        other = omen("copy", src, str(one), "--fight", "c")
        assert other.exit_code == 2 and " ".join(other.stderr.split()) == (
            f"omen: error: {one}: it holds fight 'b' already, and a single-file store keeps exactly one fight; "
            f"nothing was written: copy c into another .jsonl file, or into a directory ({tmp_path / 'one'}/: one "
            "<fight>.jsonl per fight) or a database")
        assert one.read_bytes() == (tmp_path / "fights" / "b.jsonl").read_bytes()
        assert omen("copy", src, f"{tmp_path / 'one'}/").exit_code == 0

    def test_a_copy_that_loses_a_race_says_what_to_do(self, tmp_path: Path) -> None:
        """Another copy appending the same fight to the destination while this one runs (here: as this one's first
        fight is stored) makes this one lose the race on the second: CopyRaced, a ConcurrencyError (exit 1), saying
        to run the copy again, which then finds the fight there, identical (it said "reload and try again")."""
        src = JsonlStore(tmp_path / "src")
        src.append("a", make_events("a", 3), 0)
        src.append("b", make_events("b", 2), 0)
        dst = JsonlStore(tmp_path / "dst")

        def other_copy(fight_id: str, start: int, end: int) -> None:
            if fight_id == "a":
                copying.copy_fights(src, dst, ["b"])

        with pytest.raises(copying.CopyRaced) as raced:
            copying.copy_fights(src, dst, ["a", "b"], appended=other_copy)
        assert isinstance(raced.value, ConcurrencyError)
        assert str(raced.value) == (
            f"fight 'b' in {tmp_path / 'dst'}: another writer appended to it while this copy ran (it is at seq 2, not "
            "0); nothing more was copied: run the copy again, it compares what is there now with the source (the "
            "same: left alone; a part of it: completed; anything else: refused as differing)")
        again = omen("copy", str(tmp_path / "src"), f"{tmp_path / 'dst'}/")
        assert again.exit_code == 0 and again.stdout == (f"a: already in {tmp_path / 'dst'}/, identical (3 events)\n"
                                                         f"b: already in {tmp_path / 'dst'}/, identical (2 events)\n")

    def test_one_fight_with_fight(self, tmp_path: Path) -> None:
        """``--fight`` copies that fight only; a fight the source lacks is exit 2 listing the ones it has."""
        src = JsonlStore(tmp_path / "src")
        src.append("a", make_events("a", 3), 0)
        src.append("b", make_events("b", 2), 0)
        assert omen("copy", str(tmp_path / "src"), f"{tmp_path}/dst/", "--fight", "b").exit_code == 0
        assert JsonlStore(tmp_path / "dst").fights() == ["b"]
        missing = omen("copy", str(tmp_path / "src"), f"{tmp_path}/dst/", "--fight", "c")
        assert missing.exit_code == 2 and "no fight 'c'" in missing.output and "a, b" in missing.output

    def test_a_missing_source_is_bad_input(self, tmp_path: Path) -> None:
        """A source that does not exist is exit 2, and no destination is made."""
        result = omen("copy", str(tmp_path / "none.jsonl"), str(tmp_path / "dst.jsonl"))
        assert result.exit_code == 2 and "no such log" in result.output
        assert not (tmp_path / "dst.jsonl").exists()

    def test_commands_are_never_split(self) -> None:
        """The appends of a copy carry whole commands: a run ends only where the next event opens a batch."""
        events = make_events("f", 2500)
        runs = list(copying._batches(events, [encode_line(ev) for ev in events]))
        assert sum(len(r) for r in runs) == 2500 and len(runs) == 3
        assert all(r[0].seq == r[0].batch for r in runs)
        assert runs[0][0].prev_hash == GENESIS_HASH


class TestDbInit:
    def test_init_creates_then_finds_the_tables(self, postgres: Postgres) -> None:
        """``omen db init URL`` creates omen's tables at the current schema version; run again it has nothing to
        do; a store then opens there without creating anything."""
        url = postgres.fresh_url()
        first = omen("db", "init", url)
        assert first.exit_code == 0, first.output
        assert f"schema version {SCHEMA_VERSION} (created" in " ".join(first.output.split())
        again = omen("db", "init", url)
        assert again.exit_code == 0 and "nothing to do" in again.output
        opened = open_store(url)
        assert isinstance(opened, PostgresStore)
        with opened as store:
            assert store.fights() == []

    def test_init_upgrades_an_older_schema(self, postgres: Postgres) -> None:
        """On a database at schema version 1 ``omen db init`` applies version 2 and says so."""
        from omen_core.store.postgres import upgrade

        url = postgres.fresh_url()
        with psycopg.connect(url, autocommit=True) as conn:
            upgrade(conn, url, to=1)
        result = omen("db", "init", url)
        assert result.exit_code == 0 and "upgraded from 1: applied 2" in " ".join(result.output.split())

    def test_an_unreachable_database_is_exit_2_without_a_traceback(self) -> None:
        """A server that cannot be reached is exit 2 with one line saying so, its password masked."""
        result = omen("db", "init", "postgresql://omen:secret@127.0.0.1:1/omen")
        assert result.exit_code == 2
        assert "cannot reach PostgreSQL" in result.output and "secret" not in result.output
        assert "Traceback" not in result.output

    def test_sqlite_and_other_urls(self, tmp_path: Path) -> None:
        """A SQLite URL gets its tables; a URL of files is exit 2 saying db init is for databases."""
        assert omen("db", "init", f"sqlite:///{tmp_path / 'f.db'}").exit_code == 0
        assert (tmp_path / "f.db").is_file()
        other = omen("db", "init", str(tmp_path / "f.jsonl"))
        assert other.exit_code == 2 and "give a postgresql:// or sqlite:/// URL" in other.output
