"""omen_replay: everything that reads fight logs (replay, verify, explain, narrate, the cards, render), scenarios,
fixtures and the simulator; the command line is omen_cli's."""
