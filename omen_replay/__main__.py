"""``python -m omen_replay`` runs the omen CLI."""

from .cli import main

main()
