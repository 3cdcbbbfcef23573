"""``omen simulate``: Monte Carlo encounters on the real engine, every simulated fight replayable."""
