"""omen_replay: everything that reads fight logs (replay, verify, render) and the omen CLI."""
