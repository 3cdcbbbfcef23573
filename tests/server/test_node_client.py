"""examples/node-client: a client nobody wrote in Python (Node.js, built-in fetch only) plays a whole fight
against a real server process, follows the stream, and witnesses a head that ``omen verify`` then confirms.
Skipped where there is no ``node``, unless OMEN_REQUIRE_NODE is set (``.ci/run`` sets it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.processes import Server

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None and not os.environ.get("OMEN_REQUIRE_NODE"),
                                reason="node is not installed (OMEN_REQUIRE_NODE makes this test mandatory)")


def test_the_node_client_plays_a_fight_and_its_head_verifies(tmp_path: Path) -> None:
    """The client creates a seeded fight, makes two player seats that each play their own combatant from their own
    options (an Active Defense answered by the defender's seat; every command retried once with its
    Idempotency-Key), reveals the seed, publishes the log and checks each player's stream sent every event once,
    never the other's sheet, and ended at the published log's head; omen verify --head then confirms that head
    and every seeded die."""
    assert NODE is not None, "OMEN_REQUIRE_NODE is set but node is not installed"
    server = Server(tmp_path)
    try:
        ran = subprocess.run([NODE, str(ROOT / "examples" / "node-client" / "client.mjs"), server.setup_link],
                             capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert ran.returncode == 0, ran.stderr
    said = json.loads(ran.stdout.strip().splitlines()[-1])
    verified = subprocess.run([sys.executable, "-m", "omen_cli", "verify", f"sqlite:///{tmp_path / 'events.db'}",
                               "--fight", said["fight_id"], "--head", said["head"]], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "seeded dice all match the revealed seed" in " ".join(verified.stdout.split())
