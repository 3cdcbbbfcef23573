"""Pure rule math, one module per topic: no events, no state, no I/O."""
