"""docs/server.md: every curl example, run in order as one session against the real app, answers as it says."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from omen_core import MemoryStore
from omen_server import create_app
from omen_server.keep import Keep

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "server.md"


def curl_examples(text: str) -> list[list[str]]:
    """The curl commands of the document's sh blocks, in order, each as its words (continuations joined)."""
    found: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("curl "):
                found.append(shlex.split(line))
    return found


def request_of(words: list[str], names: dict[str, str]) -> dict[str, Any]:
    """One curl command as a request: method, path, headers, body, where it writes (-o), whether it streams."""
    asked: dict[str, Any] = {"method": "GET", "headers": {}, "body": None, "out": None, "stream": False}
    words = [re.sub(r"\$([A-Z]+)", lambda m: names[m.group(1)], w) for w in words[1:]]
    it = iter(words)
    for word in it:
        if word == "-X":
            asked["method"] = next(it)
        elif word == "-H":
            key, _, value = next(it).partition(": ")
            asked["headers"][key] = value
        elif word == "-d":
            data = next(it)
            asked["body"] = (ROOT / data[1:]).read_bytes() if data.startswith("@") else data.encode()
            asked["method"] = "POST" if asked["method"] == "GET" else asked["method"]
        elif word == "-o":
            asked["out"] = next(it)
        elif word in ("-sN", "-N"):
            asked["stream"] = True
        elif word.startswith("-"):
            continue
        else:
            asked["path"] = word.removeprefix("localhost:8000")
    return asked


def test_every_curl_example_of_the_server_doc_answers_as_documented(tmp_path: Path) -> None:
    """The curl examples of docs/server.md, in order (the stream aside: an endless response), each answer 2xx,
    and the names they use ($FIGHT, $TOKEN, $ALICE, $BOB, $WATCHER) come from the answers before them ($CREATE
    is the server's creation token, as omen serve needs); the published log a player downloads is the stored log
    byte for byte."""
    examples = curl_examples(DOC.read_text(encoding="utf-8"))
    assert len(examples) >= 15
    store = MemoryStore()
    names: dict[str, str] = {"CREATE": "omen_create_docs"}
    ran = 0
    with TestClient(create_app(store, Keep(), create_token=names["CREATE"])) as client:
        for words in examples:
            asked = request_of(words, names) if all(
                m in names for m in re.findall(r"\$([A-Z]+)", " ".join(words))) else None
            assert asked is not None, f"{' '.join(words)} uses a name no answer before it gave"
            if asked["stream"]:
                continue
            if "end_turn" in (asked["body"] or b"").decode() and "vesh" in (asked["body"] or b"").decode():
                _play_on_to(client, names, "vesh")  # the doc's precondition: it is Vesh's turn
            answer = client.request(asked["method"], asked["path"], headers=asked["headers"],
                                    content=asked["body"])
            assert answer.status_code < 300, (" ".join(words), answer.status_code, answer.text)
            ran += 1
            said: Any = answer.json() if answer.headers["content-type"].startswith("application/json") else None
            if asked["path"] == "/fights" and asked["method"] == "POST":
                names.update(FIGHT=said["fight_id"], TOKEN=said["gm_token"])
            elif asked["path"].endswith("/seats") and asked["method"] == "POST":
                names[{"Alice": "ALICE", "Bob": "BOB"}.get(said["seat"]["name"], "WATCHER")] = said["token"]
            if asked["out"]:
                (tmp_path / asked["out"]).write_bytes(answer.content)
    log = (tmp_path / "fight.jsonl").read_bytes()
    stored = b"".join(bytes(line).rstrip(b"\n") + b"\n" for chunk in store.read_lines(names["FIGHT"]) for line in chunk)
    assert log == stored and ran == len(examples) - 1


def _play_on_to(client: TestClient[Any], names: dict[str, str], who: str) -> None:
    """The GM ends turns until it is ``who``'s."""
    auth = {"Authorization": f"Bearer {names['TOKEN']}"}
    for _ in range(4):
        turn = client.get(f"/fights/{names['FIGHT']}/state", headers=auth).json()["turn"]
        if turn == who:
            return
        client.post(f"/fights/{names['FIGHT']}/commands", headers=auth,
                    json={"command": {"command": "end_turn", "who": turn}})
