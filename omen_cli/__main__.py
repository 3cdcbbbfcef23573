"""``python -m omen_cli`` runs the omen CLI."""

from . import main

main()
