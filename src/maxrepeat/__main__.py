"""``python -m maxrepeat``: the command line (as the ``maxrepeat`` script)."""

from .cli import main

main()
