"""``python -m omen_server``: run the server (as ``omen serve``)."""

from .serve import main

main()
